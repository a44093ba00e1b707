// Given a Store, a LocalClient should forward every call to it unchanged: the same objects,
// the same errors, the same watch stream.
#include "emulator/client/local_client.h"

#include <catch2/catch.hpp>

#include "tests/support/forwarding_client.h"

namespace pjemu::client {
namespace {

TEST_CASE("LocalClient forwards every call to the store", "[client]") {
  FakeClock clock;
  store::Store store(clock);
  std::unique_ptr<Client> c = MakeLocalClient(store);
  auto w = c->Watch(api::Pods(), "default");
  REQUIRE(w.ok());

  Json pod = {{"metadata", {{"name", "p"}}}, {"spec", {{"containers", Json::array()}}}};
  auto created = c->Create(api::Pods(), "default", pod);
  REQUIRE(created.ok());
  CHECK(c->Get(api::Pods(), "default", "p").value() == created.value());
  CHECK(c->List(api::Pods(), "default").value()["items"].size() == 1);

  Json update = created.value();
  update["metadata"]["labels"] = {{"a", "b"}};
  auto updated = c->Update(api::Pods(), "default", update);
  REQUIRE(updated.ok());
  CHECK(store.Get(api::Pods(), "default", "p").value()["metadata"]["labels"]["a"] == "b");
  CHECK(c->Update(api::Pods(), "default", update).status().code() == Code::kConflict);

  Json status = updated.value();
  status["status"] = {{"phase", "Running"}};
  CHECK(
      c->Update(api::Pods(), "default", status, Subresource::kStatus).value()["status"]["phase"] ==
      "Running");
  CHECK(c->Patch(api::Pods(), "default", "p", PatchType::kMerge,
                 {{"metadata", {{"labels", {{"c", "d"}}}}}})
            .value()["metadata"]["labels"]["c"] == "d");
  CHECK(c->Delete(api::Pods(), "default", "p").ok());
  CHECK(c->Get(api::Pods(), "default", "p").status().code() == Code::kNotFound);

  std::vector<std::string> types;
  while (auto e = w.value()->TryNext()) types.push_back(api::WatchTypeName(e->type));
  CHECK(types == std::vector<std::string>{"ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"});
}

// A Client that only forwards List: what ListObjects does for a client that does not override it.
class ListOnly : public Client {
 public:
  explicit ListOnly(Client& inner) : inner_(inner) {}
  Result<Json> Create(const ResourceType&, std::string_view, Json, const WriteOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Result<Json> Get(const ResourceType&, std::string_view, std::string_view) override {
    return Status(Code::kInternal, "unused");
  }
  Result<Json> List(const ResourceType& t, std::string_view ns, const ListOptions& o) override {
    ++lists;
    return inner_.List(t, ns, o);
  }
  Result<Json> Update(const ResourceType&, std::string_view, Json, Subresource,
                      const WriteOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Result<Json> Patch(const ResourceType&, std::string_view, std::string_view, PatchType,
                     const Json&, Subresource, const WriteOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Result<Json> Delete(const ResourceType&, std::string_view, std::string_view,
                      const DeleteOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Result<std::shared_ptr<api::Watch>> Watch(const ResourceType&, std::string_view,
                                            const WatchOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Status Evict(std::string_view, std::string_view, const DeleteOptions&) override {
    return Status(Code::kInternal, "unused");
  }
  Status Bind(std::string_view, std::string_view, const api::PodBinding&) override {
    return Status(Code::kInternal, "unused");
  }
  int lists = 0;

 private:
  Client& inner_;
};

TEST_CASE("ListObjects hands out the store's own snapshots, other clients' come through List",
          "[client]") {
  FakeClock clock;
  store::Store store(clock);
  std::unique_ptr<Client> c = MakeLocalClient(store);
  for (const char* name : {"b", "a"}) {
    Json pod = {{"metadata", {{"name", name}, {"labels", {{"app", "x"}}}}},
                {"spec", {{"containers", Json::array()}}}};
    REQUIRE(c->Create(api::Pods(), "default", pod).ok());
  }
  ListOptions x;
  x.label_selector = "app=x";
  api::ObjectList first = c->ListObjects(api::Pods(), "default", x).value();
  REQUIRE(first.size() == 2);
  CHECK(first[0]["metadata"]["name"] == "a");                                   // List's order
  CHECK(first.ptr(0) == store.GetShared(api::Pods(), "default", "a").value());  // no copy
  CHECK(c->ListObjects(api::Pods(), "default", x).value().ptr(1) == first.ptr(1));
  std::vector<Json> names;
  for (const Json& pod : first) names.push_back(pod["metadata"]["name"]);
  CHECK(names == std::vector<Json>{"a", "b"});

  ListOnly other(*c);
  api::ObjectList through = other.ListObjects(api::Pods(), "default", x).value();
  CHECK(other.lists == 1);
  REQUIRE(through.size() == 2);
  CHECK(through[1] == first[1]);
  CHECK(through.ptr(1) != first.ptr(1));  // the listed item, not the store's snapshot
  CHECK(other.ListObjects(api::Nodes(), "default", x).value().empty());
  CHECK(ListOnly(*c).ListObjects(api::Pods(), "missing").value().empty());
}

TEST_CASE("shared writes answer with the store's snapshot, other clients' through the write",
          "[client]") {
  FakeClock clock;
  store::Store store(clock);
  std::unique_ptr<Client> c = MakeLocalClient(store);
  Json pod = {{"metadata", {{"name", "p"}}}, {"spec", {{"containers", Json::array()}}}};
  api::ObjectList::Ptr created = c->CreateShared(api::Pods(), "default", pod).value();
  CHECK(created == store.GetShared(api::Pods(), "default", "p").value());  // no copy
  Json labelled = *created;
  labelled["metadata"]["labels"] = {{"a", "b"}};
  api::ObjectList::Ptr updated = c->UpdateShared(api::Pods(), "default", labelled).value();
  CHECK(updated == store.GetShared(api::Pods(), "default", "p").value());
  CHECK((*updated)["metadata"]["labels"]["a"] == "b");
  api::ObjectList::Ptr patched =
      c->PatchShared(api::Pods(), "default", "p", PatchType::kMerge,
                     {{"status", {{"phase", "Running"}}}}, Subresource::kStatus)
          .value();
  CHECK(patched == store.GetShared(api::Pods(), "default", "p").value());
  CHECK((*patched)["status"]["phase"] == "Running");
  // The same errors as the plain writes.
  CHECK(c->UpdateShared(api::Pods(), "default", labelled).status().code() == Code::kConflict);
  CHECK(c->CreateShared(api::Pods(), "default", pod).status().code() == Code::kAlreadyExists);

  // Through a decorator that forwards only the plain calls: its writes' answers, as snapshots.
  pjemu::testing::ForwardingClient other(*c);
  api::ObjectList::Ptr again = other
                                   .PatchShared(api::Pods(), "default", "p", PatchType::kMerge,
                                                {{"metadata", {{"labels", {{"a", "c"}}}}}})
                                   .value();
  CHECK((*again)["metadata"]["labels"]["a"] == "c");
  CHECK(*again == *store.GetShared(api::Pods(), "default", "p").value());
  CHECK(again != store.GetShared(api::Pods(), "default", "p").value());  // the write's answer
  CHECK(other.CreateShared(api::Pods(), "default", pod).status().code() == Code::kAlreadyExists);

  // Reads too: the store's snapshot in process, Get's answer through others.
  CHECK(c->GetShared(api::Pods(), "default", "p").value() ==
        store.GetShared(api::Pods(), "default", "p").value());
  api::ObjectList::Ptr got = other.GetShared(api::Pods(), "default", "p").value();
  CHECK(*got == *store.GetShared(api::Pods(), "default", "p").value());
  CHECK(got != store.GetShared(api::Pods(), "default", "p").value());
  CHECK(c->GetShared(api::Pods(), "default", "q").status().code() == Code::kNotFound);
}

}  // namespace
}  // namespace pjemu::client
