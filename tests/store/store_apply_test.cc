// Given writes through the store, every one should leave metadata.managedFields as
// kube-apiserver keeps them, and Apply should be server-side apply (create-on-apply, conflicts,
// force, dry run). The merge itself is tested in tests/api/server_side_apply_test.cc.
#include "emulator/api/managed_fields.h"
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

Json Cm(Json data) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm"}}},
          {"data", std::move(data)}};
}

TEST_CASE("create, update and status writes record their managers", "[store][ssa]") {
  StoreFixture f;
  Json pod = Must(f.store.Create(api::Pods(), "default", PodJson("p"), By("kubectl-create")));
  Json m = pod["metadata"]["managedFields"];
  REQUIRE(m.size() == 1);
  CHECK(m[0]["manager"] == "kubectl-create");
  CHECK(m[0]["operation"] == "Update");
  CHECK(m[0]["time"] == pod["metadata"]["creationTimestamp"]);
  pod["metadata"]["labels"] = {{"app", "x"}};
  Json labelled = Must(f.store.Update(api::Pods(), "default", pod, api::Subresource::kNone,
                                      By("kubectl-label")));
  CHECK(labelled["metadata"]["managedFields"].size() == 2);
  Json status = labelled;
  status["status"]["phase"] = "Running";
  Json running = Must(f.store.Update(api::Pods(), "default", status, api::Subresource::kStatus,
                                     By("kubelet")));
  m = running["metadata"]["managedFields"];
  REQUIRE(m.size() == 3);
  CHECK(m[2]["manager"] == "kubelet");
  CHECK(m[2]["subresource"] == "status");
  // The store hands out the stored form: fieldsV1 as its compact text (the API server expands).
  CHECK(m[2]["fieldsV1"] == R"({"f:status":{"f:phase":{}}})");
  // A write that changes nothing is still a no-op (same resourceVersion).
  Json again = Must(f.store.Update(api::Pods(), "default", running, api::Subresource::kNone,
                                   By("someone")));
  CHECK(Rv(again) == Rv(running));
}

TEST_CASE("apply creates, conflicts, forces and removes", "[store][ssa]") {
  StoreFixture f;
  bool created = false;
  Json first = Must(f.store.Apply(api::ConfigMaps(), "default", "cm", Cm({{"a", "1"}, {"b", "2"}}),
                                  api::Subresource::kNone, By("alice"), &created));
  CHECK(created);
  CHECK(first["metadata"]["managedFields"][0]["operation"] == "Apply");
  auto conflict = f.store.Apply(api::ConfigMaps(), "default", "cm", Cm({{"a", "9"}}),
                                api::Subresource::kNone, By("bob"), &created);
  REQUIRE(conflict.status().code() == Code::kConflict);
  CHECK(conflict.status().message() ==
        "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
  CHECK(Rv(Must(f.store.Get(api::ConfigMaps(), "default", "cm"))) == Rv(first));
  // A dry run answers what apply would do and stores nothing.
  Json dry = Must(f.store.Apply(api::ConfigMaps(), "default", "cm", Cm({{"a", "9"}}),
                                api::Subresource::kNone, By("bob", true, true), &created));
  CHECK_FALSE(created);
  CHECK(dry["data"]["a"] == "9");
  CHECK(Must(f.store.Get(api::ConfigMaps(), "default", "cm"))["data"]["a"] == "1");
  Json forced = Must(f.store.Apply(api::ConfigMaps(), "default", "cm", Cm({{"a", "9"}}),
                                   api::Subresource::kNone, By("bob", true)));
  CHECK(forced["data"] == Json{{"a", "9"}, {"b", "2"}});
  Json removed = Must(f.store.Apply(api::ConfigMaps(), "default", "cm", Json(Cm(Json::object())),
                                    api::Subresource::kNone, By("alice")));
  CHECK(removed["data"] == Json{{"a", "9"}});  // b was alice's alone; a is bob's now
  CHECK(removed["metadata"]["uid"] == first["metadata"]["uid"]);
}

TEST_CASE("apply of a job's replicas and of a status", "[store][ssa]") {
  StoreFixture f;
  Json job = JobJson("j");
  Json created = Must(f.store.Apply(api::PyTorchJobs(), "default", "j", job,
                                    api::Subresource::kNone, By("kubectl")));
  CHECK(created["metadata"]["generation"] == 1);
  job["spec"]["pytorchReplicaSpecs"]["Worker"] = ReplicaJson(2);
  Json scaled = Must(f.store.Apply(api::PyTorchJobs(), "default", "j", job,
                                   api::Subresource::kNone, By("kubectl")));
  CHECK(scaled["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2);
  CHECK(scaled["metadata"]["generation"] == 2);
  Json status = {{"apiVersion", "kubeflow.org/v1"}, {"kind", "PyTorchJob"},
                 {"metadata", {{"name", "j"}}},
                 {"status", {{"conditions", {{{"type", "Created"}, {"status", "True"}}}}}}};
  Json with_status = Must(f.store.Apply(api::PyTorchJobs(), "default", "j", status,
                                        api::Subresource::kStatus, By("operator")));
  CHECK(with_status["status"]["conditions"][0]["type"] == "Created");
  Json m = with_status["metadata"]["managedFields"];
  REQUIRE(m.size() == 2);
  CHECK(m[1]["subresource"] == "status");
  api::ExpandManagedFields(with_status);
  CHECK(with_status["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:pytorchReplicaSpecs"]
            .contains("f:Worker"));
}

}  // namespace
}  // namespace pjemu::store::testing
