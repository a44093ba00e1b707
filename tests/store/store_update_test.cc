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

TEST_CASE("spec changes bump generation; metadata-only changes do not", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  job["metadata"]["annotations"] = {{"note", "x"}};
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 1);
  job["spec"]["pytorchReplicaSpecs"]["Worker"] = {{"replicas", 2}};
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 2);
  job["metadata"]["generation"] = 99;  // clients cannot set it
  job = Must(f.store.Update(api::PyTorchJobs(), "default", job));
  CHECK(job["metadata"]["generation"] == 2);
}

TEST_CASE("main-resource writes keep .status; status writes take only .status", "[store]") {
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

TEST_CASE("the validator runs on create and main-resource updates, not on status", "[store]") {
  StoreFixture f;
  int calls = 0;
  f.store.SetValidator(api::PyTorchJobs(), [&](const Json& obj, const Json* old,
                                               std::vector<std::string>* warnings) {
    ++calls;
    if (warnings) warnings->push_back("checked");
    if (obj["spec"].value("bad", false)) {
      return Status(Code::kInvalid, "PyTorchJob.kubeflow.org \"" +
                                        obj["metadata"]["name"].get<std::string>() +
                                        "\" is invalid: spec.bad: Forbidden: no" +
                                        (old ? " (update)" : " (create)"));
    }
    return Status::Ok();
  });
  std::vector<std::string> warnings;
  api::WriteOptions opts;
  opts.warnings = &warnings;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("j"), opts));
  CHECK(warnings == std::vector<std::string>{"checked"});
  Json bad = JobJson("k");
  bad["spec"]["bad"] = true;
  CHECK(f.store.Create(api::PyTorchJobs(), "default", bad).status().message() ==
        "PyTorchJob.kubeflow.org \"k\" is invalid: spec.bad: Forbidden: no (create)");
  job["spec"]["bad"] = true;
  CHECK(f.store.Update(api::PyTorchJobs(), "default", job).status().message().find("(update)") !=
        std::string::npos);
  int before = calls;
  job["status"] = {{"x", 1}};
  Must(f.store.Update(api::PyTorchJobs(), "default", job, api::Subresource::kStatus));
  CHECK(calls == before);
}

}  // namespace
}  // namespace pjemu::store::testing
