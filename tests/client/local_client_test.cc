// Given a Store, a LocalClient should forward every call to it unchanged: the same objects,
// the same errors, the same watch stream.
#include "emulator/client/local_client.h"

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace pjemu::client
