// Given stored objects, updates (PUT) should follow optimistic concurrency, bump generation only
// on spec changes, keep .status on main-resource writes and take only .status on status writes.
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

TEST_CASE("update with stale resourceVersion returns Conflict", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json first = job;
  first["metadata"]["labels"] = {{"a", "1"}};
  Must(f.store.Update(api::PyTorchJobs(), "default", first));
  Json stale = job;
  stale["metadata"]["labels"] = {{"a", "2"}};
  auto r = f.store.Update(api::PyTorchJobs(), "default", stale);
  REQUIRE(r.status().code() == Code::kConflict);
  CHECK(r.status().message() ==
        "Operation cannot be fulfilled on pytorchjobs.kubeflow.org \"mnist\": the object has been "
        "modified; please apply your changes to the latest version and try again");
}

TEST_CASE("update without resourceVersion is unconditional", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Must(f.store.Update(api::PyTorchJobs(), "default", job));
  job["metadata"].erase("resourceVersion");
  job["metadata"]["labels"] = {{"a", "b"}};
  Json out = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(out["metadata"]["labels"]["a"] == "b");
}

TEST_CASE("update of a missing object is NotFound", "[store]") {
  StoreFixture f;
  auto r = f.store.Update(api::PyTorchJobs(), "default", JobJson("ghost"));
  CHECK(r.status().code() == Code::kNotFound);
}

TEST_CASE("spec changes bump generation, metadata-only changes do not", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  job["metadata"]["annotations"] = {{"note", "x"}};
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 1);
  job["spec"]["pytorchReplicaSpecs"]["Worker"] = ReplicaJson(2);
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 2);
  job["metadata"]["generation"] = 99;  // clients cannot set it
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 2);
}

TEST_CASE("main-resource writes keep .status, status writes take only .status", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json with_status = job;
  with_status["status"] = {{"conditions", Json::array({{{"type", "Created"}}})}};
  with_status["spec"]["runPolicy"] = {{"suspend", true}};  // ignored by a status write
  with_status["metadata"]["labels"] = {{"ignored", "yes"}};
  Json s =
      Must(f.store.Update(api::PyTorchJobs(), "default", with_status, api::Subresource::kStatus));
  CHECK(s["status"]["conditions"][0]["type"] == "Created");
  CHECK_FALSE(s["spec"].contains("runPolicy"));
  CHECK_FALSE(s["metadata"].contains("labels"));
  CHECK(s["metadata"]["generation"] == 1);

  Json main = s;
  main["status"] = {{"conditions", Json::array()}};
  main["spec"]["runPolicy"] = {{"suspend", true}};
  Json m = Must(f.store.Update(api::PyTorchJobs(), "default", main));
  CHECK(m["status"]["conditions"][0]["type"] == "Created");
  CHECK(m["spec"]["runPolicy"]["suspend"] == true);
  CHECK(m["metadata"]["generation"] == 2);
}

TEST_CASE("status writes to a type without a status subresource are NotFound", "[store]") {
  StoreFixture f;
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  Json ev = Must(f.store.Create(api::Events(), "default", EventAbout("e", pod, "Created")));
  auto r = f.store.Update(api::Events(), "default", ev, api::Subresource::kStatus);
  CHECK(r.status().code() == Code::kNotFound);
}

TEST_CASE("uid and creationTimestamp cannot be changed by an update", "[store]") {
  StoreFixture f;
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  f.clock.Advance(5s);
  Json changed = pod;
  changed["metadata"]["creationTimestamp"] = "2030-01-01T00:00:00Z";
  changed["metadata"]["labels"] = {{"x", "y"}};
  Json out = Must(f.store.Update(api::Pods(), "default", changed));
  CHECK(out["metadata"]["creationTimestamp"] == pod["metadata"]["creationTimestamp"]);
  changed = out;
  changed["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000";
  auto r = f.store.Update(api::Pods(), "default", changed);
  CHECK(r.status().code() == Code::kConflict);
  CHECK(r.status().message().find("Precondition failed: UID in precondition") != std::string::npos);
}

TEST_CASE("a no-op update keeps the resourceVersion and emits nothing", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default", {{}, Rv(job)}));
  Json same = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(Rv(same) == Rv(job));
  CHECK(Drain(*w).empty());
}

TEST_CASE("the type's admission runs on create and main-resource updates, not on status",
          "[store]") {
  // No validator is installed: the store admits PyTorchJobs through the webhook that the
  // resource table gives the type. Its warning shows when it ran, its CEL rule (which needs the
  // stored object) that an update hands it the old object.
  StoreFixture f;
  const std::string kDeprecated =
      "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead";
  std::vector<std::string> warnings;
  api::WriteOptions opts;
  opts.warnings = &warnings;
  Json elastic = JobJson("j");
  elastic["spec"]["pytorchReplicaSpecs"]["Worker"] = ReplicaJson(1);
  elastic["spec"]["elasticPolicy"] = {{"nProcPerNode", 1}};
  elastic["spec"]["runPolicy"] = {{"schedulingPolicy", {{"queue", "a"}}}};
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", elastic, opts));
  CHECK(warnings == std::vector<std::string>{kDeprecated});
  Json bad = JobJson("k");
  bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2;
  CHECK(f.store.Create(api::PyTorchJobs(), "default", bad).status().message() ==
        "admission webhook \"validator.pytorchjob.training-operator.kubeflow.org\" denied the "
        "request: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1");
  job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "b";
  CHECK(f.store.Update(api::PyTorchJobs(), "default", job).status().message() ==
        "PyTorchJob.kubeflow.org \"j\" is invalid: spec.runPolicy.schedulingPolicy.queue: "
        "Invalid value: \"string\": spec.runPolicy.schedulingPolicy.queue is immutable");
  warnings.clear();
  job["status"] = {{"x", 1}};
  Must(f.store.Update(api::PyTorchJobs(), "default", job, api::Subresource::kStatus, opts));
  CHECK(warnings.empty());
}

}  // namespace
}  // namespace pjemu::store::testing
