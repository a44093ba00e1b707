// Given owners, dependents, finalizers and pods bound to nodes, Delete should follow
// kube-apiserver plus the garbage collector: cascades by ownerReferences (Background, Foreground,
// Orphan), deletionTimestamp while finalizers remain, graceful pod deletion, namespace deletion.
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

bool Exists(Store& s, const api::ResourceType& t, const std::string& name) {
  return s.Get(t, "default", name).ok();
}

struct Family {
  Json job, pod, svc, grandchild;
};

// A job owning a pod and a service; the pod owns a configmap-like grandchild (an event-free
// object of another kind) and has an Event about it.
Family MakeFamily(Store& s) {
  Family fam;
  fam.job = Must(s.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  fam.pod = Must(s.Create(api::Pods(), "default", OwnedBy(PodJson("mnist-master-0"), fam.job)));
  fam.svc = Must(s.Create(
      api::Services(), "default",
      OwnedBy({{"metadata", {{"name", "mnist-master-0"}}}, {"spec", Json::object()}}, fam.job)));
  Json cm = {{"metadata", {{"name", "mnist-cm"}}}, {"data", {{"k", "v"}}}};
  fam.grandchild =
      Must(s.Create(*api::FindResource("", "configmaps"), "default", OwnedBy(cm, fam.pod)));
  Must(s.Create(api::Events(), "default", EventAbout("mnist.1", fam.job, "SuccessfulCreatePod")));
  Must(s.Create(api::Events(), "default", EventAbout("mnist-master-0.1", fam.pod, "Scheduled")));
  return fam;
}

TEST_CASE("background delete cascades to dependents, grandchildren and events", "[store]") {
  StoreFixture f;
  MakeFamily(f.store);
  auto w =
      Must(f.store.Watch(api::Pods(), "default", {{}, std::to_string(f.store.ResourceVersion())}));
  api::DeleteOptions opts;
  opts.propagation_policy = "Background";
  Json gone = Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist", opts));
  CHECK(std::stoull(Rv(gone)) > 0);
  CHECK_FALSE(Exists(f.store, api::PyTorchJobs(), "mnist"));
  CHECK_FALSE(Exists(f.store, api::Pods(), "mnist-master-0"));
  CHECK_FALSE(Exists(f.store, api::Services(), "mnist-master-0"));
  CHECK_FALSE(Exists(f.store, *api::FindResource("", "configmaps"), "mnist-cm"));
  CHECK(Must(f.store.List(api::Events(), "default"))["items"].empty());
  CHECK(Drain(*w) == std::vector<std::string>{"DELETED mnist-master-0"});
}

TEST_CASE("a dependent with another live owner only loses the dangling reference", "[store]") {
  StoreFixture f;
  Json a = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("a")));
  Json b = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("b")));
  Json pod = OwnedBy(PodJson("shared"), a);
  pod["metadata"]["ownerReferences"].push_back(
      OwnedBy(PodJson("x"), b)["metadata"]["ownerReferences"][0]);
  pod["metadata"]["ownerReferences"][1]["controller"] = false;
  Must(f.store.Create(api::Pods(), "default", pod));
  Must(f.store.Delete(api::PyTorchJobs(), "default", "a"));
  Json left = Must(f.store.Get(api::Pods(), "default", "shared"));
  REQUIRE(left["metadata"]["ownerReferences"].size() == 1);
  CHECK(left["metadata"]["ownerReferences"][0]["name"] == "b");
}

TEST_CASE("garbage collection follows ownerReferences as updates change them", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json adopted = Must(f.store.Create(api::Pods(), "default", PodJson("adopted")));
  Json released = Must(f.store.Create(api::Pods(), "default", OwnedBy(PodJson("released"), job)));
  Must(f.store.Update(api::Pods(), "default", OwnedBy(adopted, job)));
  released["metadata"].erase("ownerReferences");
  Must(f.store.Update(api::Pods(), "default", released));
  Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist"));
  CHECK_FALSE(Exists(f.store, api::Pods(), "adopted"));
  CHECK(Exists(f.store, api::Pods(), "released"));
}

TEST_CASE("orphan delete strips ownerReferences and keeps dependents", "[store]") {
  StoreFixture f;
  MakeFamily(f.store);
  api::DeleteOptions opts;
  opts.propagation_policy = "Orphan";
  Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist", opts));
  CHECK_FALSE(Exists(f.store, api::PyTorchJobs(), "mnist"));
  Json pod = Must(f.store.Get(api::Pods(), "default", "mnist-master-0"));
  CHECK_FALSE(pod["metadata"].contains("ownerReferences"));
  CHECK(Exists(f.store, api::Services(), "mnist-master-0"));
}

TEST_CASE("foreground delete removes dependents first, then the owner", "[store]") {
  StoreFixture f;
  MakeFamily(f.store);
  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default",
                              {{}, std::to_string(f.store.ResourceVersion())}));
  api::DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  Json answer = Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist", opts));
  CHECK(answer["metadata"].contains("deletionTimestamp"));
  CHECK(answer["metadata"]["finalizers"] == Json::array({"foregroundDeletion"}));
  CHECK_FALSE(Exists(f.store, api::PyTorchJobs(), "mnist"));
  CHECK_FALSE(Exists(f.store, api::Pods(), "mnist-master-0"));
  CHECK(Drain(*w) == std::vector<std::string>{"MODIFIED mnist", "DELETED mnist"});
}

TEST_CASE("foreground delete waits for a dependent held by a finalizer", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json pod = OwnedBy(PodJson("held"), job);
  pod["metadata"]["finalizers"] = {"example.com/hold"};
  Must(f.store.Create(api::Pods(), "default", pod));
  api::DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist", opts));
  CHECK(Exists(f.store, api::PyTorchJobs(), "mnist"));
  Json held = Must(f.store.Get(api::Pods(), "default", "held"));
  CHECK(held["metadata"].contains("deletionTimestamp"));
  held["metadata"].erase("finalizers");
  Must(f.store.Update(api::Pods(), "default", held));
  CHECK_FALSE(Exists(f.store, api::Pods(), "held"));
  CHECK_FALSE(Exists(f.store, api::PyTorchJobs(), "mnist"));
}

TEST_CASE("finalizers hold an object with deletionTimestamp until the last is removed", "[store]") {
  StoreFixture f;
  Json job = JobJson("mnist");
  job["metadata"]["finalizers"] = {"kubeflow.org/a", "kubeflow.org/b"};
  Must(f.store.Create(api::PyTorchJobs(), "default", job));
  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default",
                              {{}, std::to_string(f.store.ResourceVersion())}));
  f.clock.Advance(3s);
  Json held = Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist"));
  CHECK(held["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:03Z");
  CHECK(held["metadata"]["deletionGracePeriodSeconds"] == 0);
  CHECK(held["metadata"]["generation"] == 2);
  // Deleting again changes nothing.
  CHECK(Rv(Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist"))) == Rv(held));

  Json add = held;
  add["metadata"]["finalizers"].push_back("kubeflow.org/c");
  auto refused = f.store.Update(api::PyTorchJobs(), "default", add);
  CHECK(refused.status().code() == Code::kInvalid);
  CHECK(refused.status().message().find(
            "no new finalizers can be added if the object is being "
            "deleted, found new finalizers []string{\"kubeflow.org/c\"}") != std::string::npos);

  held["metadata"]["finalizers"] = {"kubeflow.org/b"};
  held = Must(f.store.Update(api::PyTorchJobs(), "default", held));
  CHECK(Exists(f.store, api::PyTorchJobs(), "mnist"));
  Json last = Must(f.store.Patch(api::PyTorchJobs(), "default", "mnist", api::PatchType::kMerge,
                                 {{"metadata", {{"finalizers", nullptr}}}}));
  CHECK_FALSE(Exists(f.store, api::PyTorchJobs(), "mnist"));
  CHECK(Drain(*w) == std::vector<std::string>{"MODIFIED mnist", "MODIFIED mnist", "DELETED mnist"});
  CHECK(Rv(last) == std::to_string(f.store.ResourceVersion()));
}

TEST_CASE("delete preconditions and bad options are refused", "[store]") {
  StoreFixture f;
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  api::DeleteOptions uid;
  uid.precondition_uid = "other";
  auto r = f.store.Delete(api::Pods(), "default", "p", uid);
  CHECK(r.status().code() == Code::kConflict);
  CHECK(r.status().message() ==
        "Operation cannot be fulfilled on pods \"p\": Precondition failed: "
        "UID in precondition: other, UID in object meta: " +
            pod["metadata"]["uid"].get<std::string>());
  api::DeleteOptions rv;
  rv.precondition_resource_version = "1";
  CHECK(f.store.Delete(api::Pods(), "default", "p", rv).status().code() == Code::kConflict);
  api::DeleteOptions bad;
  bad.propagation_policy = "Sideways";
  CHECK(f.store.Delete(api::Pods(), "default", "p", bad).status().code() == Code::kInvalid);
  api::DeleteOptions dry;
  dry.dry_run = true;
  Must(f.store.Delete(api::Pods(), "default", "p", dry));
  CHECK(Exists(f.store, api::Pods(), "p"));
  CHECK(f.store.Delete(api::Pods(), "default", "ghost").status().code() == Code::kNotFound);
}

TEST_CASE("pods bound to a node are deleted gracefully", "[store]") {
  StoreFixture f;
  Json pod = PodJson("bound");
  pod["spec"]["nodeName"] = "node-1";
  pod["spec"]["terminationGracePeriodSeconds"] = 20;
  Must(f.store.Create(api::Pods(), "default", pod));
  Json unbound = Must(f.store.Create(api::Pods(), "default", PodJson("unbound")));

  SECTION("an unscheduled pod goes at once") {
    Must(f.store.Delete(api::Pods(), "default", "unbound"));
    CHECK_FALSE(Exists(f.store, api::Pods(), "unbound"));
  }
  SECTION("a running pod gets deletionTimestamp = now + grace and stays") {
    Json t = Must(f.store.Delete(api::Pods(), "default", "bound"));
    CHECK(t["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:20Z");
    CHECK(t["metadata"]["deletionGracePeriodSeconds"] == 20);
    CHECK(Exists(f.store, api::Pods(), "bound"));
    // A shorter grace period shortens it; a longer one changes nothing.
    api::DeleteOptions shorter;
    shorter.grace_period_seconds = 5;
    t = Must(f.store.Delete(api::Pods(), "default", "bound", shorter));
    CHECK(t["metadata"]["deletionGracePeriodSeconds"] == 5);
    api::DeleteOptions longer;
    longer.grace_period_seconds = 60;
    CHECK(Must(f.store.Delete(api::Pods(), "default", "bound",
                              longer))["metadata"]["deletionGracePeriodSeconds"] == 5);
    // The kubelet, once the processes are gone, deletes with grace 0.
    api::DeleteOptions now;
    now.grace_period_seconds = 0;
    Must(f.store.Delete(api::Pods(), "default", "bound", now));
    CHECK_FALSE(Exists(f.store, api::Pods(), "bound"));
  }
  SECTION("a terminal pod goes at once") {
    Json p = Must(f.store.Get(api::Pods(), "default", "bound"));
    p["status"] = {{"phase", "Succeeded"}};
    Must(f.store.Update(api::Pods(), "default", p, api::Subresource::kStatus));
    Must(f.store.Delete(api::Pods(), "default", "bound"));
    CHECK_FALSE(Exists(f.store, api::Pods(), "bound"));
  }
  SECTION("the default grace period is 30s") {
    Json p = PodJson("plain");
    p["spec"]["nodeName"] = "node-1";
    Must(f.store.Create(api::Pods(), "default", p));
    CHECK(Must(f.store.Delete(api::Pods(), "default",
                              "plain"))["metadata"]["deletionGracePeriodSeconds"] == 30);
  }
}

TEST_CASE("a terminating pod with a finalizer waits for it after the kubelet's final delete",
          "[store]") {
  StoreFixture f;
  Json pod = PodJson("p");
  pod["spec"]["nodeName"] = "node-1";
  pod["metadata"]["finalizers"] = {"example.com/keep"};
  Must(f.store.Create(api::Pods(), "default", pod));
  Must(f.store.Delete(api::Pods(), "default", "p"));
  api::DeleteOptions now;
  now.grace_period_seconds = 0;
  Json t = Must(f.store.Delete(api::Pods(), "default", "p", now));
  CHECK(t["metadata"]["deletionGracePeriodSeconds"] == 0);
  CHECK(Exists(f.store, api::Pods(), "p"));
  t["metadata"].erase("finalizers");
  Must(f.store.Update(api::Pods(), "default", t));
  CHECK_FALSE(Exists(f.store, api::Pods(), "p"));
}

TEST_CASE("deleting a namespace deletes everything in it", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Namespaces(), "", {{"metadata", {{"name", "team"}}}}));
  Json pod = PodJson("p");
  pod["spec"]["nodeName"] = "node-1";  // even a running pod goes at once (a deviation)
  Must(f.store.Create(api::Pods(), "team", pod));
  Must(f.store.Create(api::PyTorchJobs(), "team", JobJson("j")));
  Must(f.store.Create(api::Pods(), "default", PodJson("other")));
  Must(f.store.Delete(api::Namespaces(), "", "team"));
  CHECK(Must(f.store.List(api::Pods(), "team"))["items"].empty());
  CHECK(Must(f.store.List(api::PyTorchJobs(), "team"))["items"].empty());
  CHECK(f.store.Get(api::Namespaces(), "", "team").status().code() == Code::kNotFound);
  CHECK(Exists(f.store, api::Pods(), "other"));
  CHECK(f.store.Create(api::Pods(), "team", PodJson("q")).status().message() ==
        "namespaces \"team\" not found");
  auto r = f.store.Delete(api::Namespaces(), "", "default");
  CHECK(r.status().code() == Code::kForbidden);
}

TEST_CASE("delete collection deletes what matches the selectors", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("a", {{"job", "x"}})));
  Must(f.store.Create(api::Pods(), "default", PodJson("b", {{"job", "x"}})));
  Must(f.store.Create(api::Pods(), "default", PodJson("c", {{"job", "y"}})));
  api::ListOptions sel;
  sel.label_selector = "job=x";
  Json out = Must(f.store.DeleteCollection(api::Pods(), "default", sel));
  CHECK(out["items"].size() == 2);
  CHECK(Must(f.store.List(api::Pods(), "default"))["items"].size() == 1);
}

}  // namespace
}  // namespace pjemu::store::testing
