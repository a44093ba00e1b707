// Given updates and patches by in-process actors (Form::kInProcess), whose managedFields the store
// computes only when something needs them, everything the API server serves (reads, lists,
// watches, later writes, applies, deletions) should be exactly what a store that computed them at
// once serves; and the in-process readers should see the versions not computed yet without them.
#include <functional>

#include "emulator/api/managed_fields.h"
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

Json Cm(const std::string& name, Json data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", std::move(data)}};
}

// Two stores over one clock, given the same writes: `actors` with the in-process form where the
// test says so, `served` always as the API server writes.
struct Twins {
  explicit Twins(std::size_t pack_after_writes) {
    StoreOptions o;
    o.pack_after_writes = pack_after_writes;
    actors = std::make_unique<Store>(clock, o);
    served = std::make_unique<Store>(clock, o);
    // Watches opened before any write, as the API server's clients hold them.
    for (Store* s : {actors.get(), served.get()}) {
      watches.push_back(Must(s->Watch(api::Pods(), "default")));
      api::WatchOptions selected;
      selected.label_selector = "app=x";
      watches.push_back(Must(s->Watch(api::Pods(), "default", selected)));
    }
  }

  // The same write on both stores; `form` is the actors' store's. Results compared as served.
  void Both(const std::function<Result<Json>(Store&, Form)>& write, Form form) {
    Result<Json> a = write(*actors, form), b = write(*served, Form::kServed);
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) CHECK(a.status().ToString() == b.status().ToString());
    clock.Advance(std::chrono::seconds(1));
  }

  // Every read the API server makes, as text: gets, lists, the watches opened first, and new
  // watches from the first resourceVersion (the history), unselected and selected.
  std::vector<std::string> Reads(Store& s, std::size_t first_watch) {
    std::vector<std::string> out;
    for (const char* name : {"a", "b", "c"}) {
      auto got = s.Get(api::Pods(), "default", name);
      out.push_back(got.ok() ? got->dump() : got.status().ToString());
    }
    for (const char* name : {"cm", "gone"}) {
      auto got = s.Get(api::ConfigMaps(), "default", name);
      out.push_back(got.ok() ? got->dump() : got.status().ToString());
    }
    out.push_back(Must(s.List(api::Pods(), "default"))["items"].dump());
    for (std::size_t i = first_watch; i < first_watch + 2; ++i) {
      while (auto e = watches[i]->TryNext()) out.push_back(e->object().dump());
    }
    for (const char* selector : {"", "app=x"}) {
      api::WatchOptions from = From("1");
      from.label_selector = selector;
      auto w = Must(s.Watch(api::Pods(), "default", from));
      while (auto e = w->TryNext()) out.push_back(e->object().dump());
    }
    return out;
  }

  FakeClock clock;
  std::unique_ptr<Store> actors, served;
  std::vector<std::shared_ptr<api::Watch>> watches;  // actors' two, then served's two
};

Json PodStatus(const std::string& name, const std::string& phase, int restarts) {
  return {{"metadata", {{"name", name}}},
          {"status",
           {{"phase", phase},
            {"containerStatuses", Json::array({{{"name", "main"}, {"restartCount", restarts}}})}}}};
}

// The writes of a pod's life and its neighbours', with the in-process form `form` where an actor
// would write.
void Writes(Twins& t, Form form) {
  for (const char* name : {"a", "b", "c"}) {
    t.Both(
        [&](Store& s, Form) {
          return s.Create(api::Pods(), "default", PodJson(name, {{"app", "x"}}), By("controller"));
        },
        form);
  }
  t.Both(
      [&](Store& s, Form) {
        return s.Create(api::ConfigMaps(), "default", Cm("cm", {{"k", "v"}}), By("kubectl-create"));
      },
      form);
  t.Both(
      [&](Store& s, Form) {
        return s.BindPod("default", "a", {"node-1", "", "", {}}).status().ok()
                   ? s.Get(api::Pods(), "default", "a")
                   : Result<Json>(Status(Code::kInternal, "bind"));
      },
      form);
  // Status writes by the kubelet, more than one chain's worth on pod a.
  for (int i = 0; i < 20; ++i) {
    t.Both(
        [&](Store& s, Form f) {
          return s.Update(api::Pods(), "default",
                          PodStatus("a", i < 19 ? "Running" : "Succeeded", i),
                          api::Subresource::kStatus, By("kubelet"), f);
        },
        form);
  }
  t.Both(
      [&](Store& s, Form f) {
        return s.Update(api::Pods(), "default", PodStatus("b", "Pending", 0),
                        api::Subresource::kStatus, By("kubelet"), f);
      },
      form);
  // A label patch by a controller (merge, then JSON patch), one that takes b out of app=x.
  t.Both(
      [&](Store& s, Form f) {
        return s.Patch(api::Pods(), "default", "b", api::PatchType::kMerge,
                       {{"metadata", {{"labels", {{"app", "y"}, {"role", "w"}}}}}},
                       api::Subresource::kNone, By("controller"), f);
      },
      form);
  t.Both(
      [&](Store& s, Form f) {
        return s.Patch(
            api::Pods(), "default", "b", api::PatchType::kJson,
            Json::array(
                {{{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"note", "1"}}}}}),
            api::Subresource::kNone, By("annotator"), f);
      },
      form);
  // A no-op update by an actor: the same resourceVersion.
  t.Both(
      [&](Store& s, Form f) {
        Json b = Must(s.Get(api::Pods(), "default", "b", f));
        return s.Update(api::Pods(), "default", b, api::Subresource::kNone, By("controller"), f);
      },
      form);
  // A full update of c by an actor from what it read, then one by kubectl from what it read
  // (managedFields sent back: never deferred).
  t.Both(
      [&](Store& s, Form f) {
        Json c = Must(s.Get(api::Pods(), "default", "c", f));
        c["metadata"].erase("managedFields");  // an actor's body names none
        c["metadata"]["labels"]["tier"] = "1";
        return s.Update(api::Pods(), "default", c, api::Subresource::kNone, By("controller"), f);
      },
      form);
  t.Both(
      [&](Store& s, Form) {
        Json c = Must(s.Get(api::Pods(), "default", "c"));
        c["metadata"]["labels"]["tier"] = "2";
        return s.Update(api::Pods(), "default", c, api::Subresource::kNone, By("kubectl-edit"));
      },
      form);
  // Server-side apply over deferred versions, by the API server.
  t.Both(
      [&](Store& s, Form f) {
        (void)s.Update(api::Pods(), "default", PodStatus("c", "Running", 1),
                       api::Subresource::kStatus, By("kubelet"), f);
        Json config = {{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata", {{"name", "c"}, {"labels", {{"owner", "me"}}}}}};
        return s.Apply(api::Pods(), "default", "c", config, api::Subresource::kNone, By("applier"));
      },
      form);
  // A ConfigMap with a finalizer, deleted, whose finalizer an actor then removes: the update is
  // the deletion (its DELETED event carries the managedFields).
  t.Both(
      [&](Store& s, Form f) {
        Json cm = Cm("gone", {{"k", "v"}});
        cm["metadata"]["finalizers"] = Json::array({"example.com/keep"});
        Must(s.Create(api::ConfigMaps(), "default", cm, By("kubectl-create")));
        Json live = Must(s.Get(api::ConfigMaps(), "default", "gone", f));
        live["metadata"].erase("managedFields");
        live["data"]["k"] = "w";
        Must(s.Update(api::ConfigMaps(), "default", live, api::Subresource::kNone, By("controller"),
                      f));
        Must(s.Delete(api::ConfigMaps(), "default", "gone"));
        live = Must(s.Get(api::ConfigMaps(), "default", "gone", f));
        live["metadata"].erase("managedFields");
        live["metadata"]["finalizers"] = Json::array();
        return s.Update(api::ConfigMaps(), "default", live, api::Subresource::kNone,
                        By("controller"), f);
      },
      form);
  // An actor's update of the ConfigMap, then one the API server makes over it.
  t.Both(
      [&](Store& s, Form f) {
        Json cm = Must(s.Get(api::ConfigMaps(), "default", "cm", f));
        cm["metadata"].erase("managedFields");
        cm["data"]["k2"] = "v2";
        Must(s.Update(api::ConfigMaps(), "default", cm, api::Subresource::kNone, By("controller"),
                      f));
        return s.Patch(api::ConfigMaps(), "default", "cm", api::PatchType::kMerge,
                       {{"data", {{"k3", "v3"}}}}, api::Subresource::kNone, By("kubectl-patch"));
      },
      form);
}

TEST_CASE("in-process writes serve exactly what writes computed at once serve", "[store][ssa]") {
  for (std::size_t pack : {std::size_t{0}, std::size_t{1}}) {
    INFO("pack_after_writes " << pack);
    Twins t(pack);
    Writes(t, Form::kInProcess);
    std::vector<std::string> actors = t.Reads(*t.actors, 0), served = t.Reads(*t.served, 2);
    REQUIRE(actors.size() == served.size());
    for (std::size_t i = 0; i < actors.size(); ++i) {
      INFO("read " << i);
      CHECK(actors[i] == served[i]);
    }
    CHECK(Rv(Must(t.actors->Get(api::Pods(), "default", "a"))) ==
          Rv(Must(t.served->Get(api::Pods(), "default", "a"))));
  }
}

TEST_CASE("an in-process reader sees a deferred version without managedFields", "[store][ssa]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("p"), By("controller")));
  Json written = Must(f.store.Update(api::Pods(), "default", PodStatus("p", "Running", 0),
                                     api::Subresource::kStatus, By("kubelet"), Form::kInProcess));
  CHECK_FALSE(written["metadata"].contains("managedFields"));
  CHECK_FALSE(Must(f.store.Get(api::Pods(), "default", "p", Form::kInProcess))["metadata"].contains(
      "managedFields"));
  // As served: both managers. The in-process form stays the version without them (its bytes
  // are those the kubelet's parked copy packs to).
  Json served = Must(f.store.Get(api::Pods(), "default", "p"));
  REQUIRE(served["metadata"]["managedFields"].size() == 2);
  CHECK(served["metadata"]["managedFields"][1]["manager"] == "kubelet");
  Json in_process = Must(f.store.Get(api::Pods(), "default", "p", Form::kInProcess));
  CHECK_FALSE(in_process["metadata"].contains("managedFields"));
  in_process["metadata"]["managedFields"] = served["metadata"]["managedFields"];
  CHECK(in_process == served);
  // A write that sends managedFields of its own is never deferred.
  Json sent = served;
  sent["metadata"]["labels"] = {{"a", "b"}};
  Json updated = Must(f.store.Update(api::Pods(), "default", sent, api::Subresource::kNone,
                                     By("controller"), Form::kInProcess));
  CHECK(updated["metadata"].contains("managedFields"));
}

}  // namespace
}  // namespace pjemu::store::testing
