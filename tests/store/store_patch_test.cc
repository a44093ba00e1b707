// Given a stored object, merge patches (RFC 7386) and JSON patches (RFC 6902) should apply and
// then follow the update rules; strategic merge is refused for custom resources.
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

TEST_CASE("merge patch adds, replaces and removes fields", "[store]") {
  StoreFixture f;
  Json job = JobJson("mnist");
  job["metadata"]["labels"] = {{"keep", "1"}, {"drop", "2"}};
  Must(f.store.Create(api::PyTorchJobs(), "default", job));
  Json out = Must(f.store.Patch(api::PyTorchJobs(), "default", "mnist", api::PatchType::kMerge,
                                {{"metadata", {{"labels", {{"drop", nullptr}, {"new", "3"}}}}},
                                 {"spec", {{"runPolicy", {{"suspend", true}}}}}}));
  CHECK(out["metadata"]["labels"] == Json{{"keep", "1"}, {"new", "3"}});
  CHECK(out["spec"]["runPolicy"]["suspend"] == true);
  CHECK(out["metadata"]["generation"] == 2);
}

TEST_CASE("merge patch on the status subresource changes only .status", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json patch = {{"status", {{"replicaStatuses", {{"Master", {{"active", 1}}}}}}},
                {"spec", {{"x", 1}}}};
  Json out = Must(f.store.Patch(api::PyTorchJobs(), "default", "mnist", api::PatchType::kMerge,
                                patch, api::Subresource::kStatus));
  CHECK(out["status"]["replicaStatuses"]["Master"]["active"] == 1);
  CHECK_FALSE(out["spec"].contains("x"));
  // ... and a main-resource patch of .status is ignored.
  Json main = Must(f.store.Patch(api::PyTorchJobs(), "default", "mnist", api::PatchType::kMerge,
                                 {{"status", nullptr}}));
  CHECK(main["status"]["replicaStatuses"]["Master"]["active"] == 1);
}

TEST_CASE("JSON patch applies operations in order", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Json ops = Json::array({
      {{"op", "test"}, {"path", "/spec/pytorchReplicaSpecs/Master/replicas"}, {"value", 1}},
      {{"op", "add"}, {"path", "/spec/pytorchReplicaSpecs/Worker"}, {"value", ReplicaJson(3)}},
      {{"op", "replace"}, {"path", "/spec/pytorchReplicaSpecs/Worker/replicas"}, {"value", 4}},
  });
  Json out =
      Must(f.store.Patch(api::PyTorchJobs(), "default", "mnist", api::PatchType::kJson, ops));
  CHECK(out["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 4);
}

TEST_CASE("patch failures are refused with the real server's codes", "[store]") {
  StoreFixture f;
  Json job = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  auto [type, patch, code] = GENERATE_COPY(table<api::PatchType, Json, Code>({
      {api::PatchType::kJson,
       Json::array(
           {{{"op", "test"}, {"path", "/spec/pytorchReplicaSpecs/Master/replicas"}, {"value", 7}}}),
       Code::kInvalid},
      {api::PatchType::kJson,
       Json::array({{{"op", "replace"}, {"path", "/spec/nosuch/field"}, {"value", 1}}}),
       Code::kInvalid},
      {api::PatchType::kJson, Json{{"op", "add"}}, Code::kBadRequest},
      {api::PatchType::kMerge, Json::array(), Code::kBadRequest},
      {api::PatchType::kMerge, Json{{"metadata", {{"resourceVersion", "1"}}}}, Code::kConflict},
      {api::PatchType::kMerge, Json{{"metadata", {{"name", "other"}}}}, Code::kBadRequest},
      {api::PatchType::kStrategicMerge, Json{{"spec", Json::object()}},
       Code::kUnsupportedMediaType},
  }));
  CAPTURE(patch.dump());
  auto r = f.store.Patch(api::PyTorchJobs(), "default", "mnist", type, patch);
  CHECK(r.status().code() == code);
  CHECK(Rv(Must(f.store.Get(api::PyTorchJobs(), "default", "mnist"))) == Rv(job));
}

TEST_CASE("a failed JSON patch test names the path in the cause", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  auto r = f.store.Patch(
      api::PyTorchJobs(), "default", "mnist", api::PatchType::kJson,
      Json::array(
          {{{"op", "test"}, {"path", "/spec/pytorchReplicaSpecs/Master/replicas"}, {"value", 1}},
           {{"op", "test"}, {"path", "/spec/x"}, {"value", 7}},
           {{"op", "test"}, {"path", "/spec/y"}, {"value", 8}}}));
  REQUIRE(r.status().code() == Code::kInvalid);
  CHECK(r.status().details()["causes"][0]["message"] ==
        "testing value /spec/x failed: test failed");
}

TEST_CASE("strategic merge on a core kind is applied as a merge patch", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  Json out = Must(f.store.Patch(api::Pods(), "default", "p", api::PatchType::kStrategicMerge,
                                {{"metadata", {{"labels", {{"a", "b"}}}}}}));
  CHECK(out["metadata"]["labels"]["a"] == "b");
}

TEST_CASE("patch of a missing object is NotFound", "[store]") {
  StoreFixture f;
  auto r = f.store.Patch(api::Pods(), "default", "ghost", api::PatchType::kMerge, Json::object());
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message() == "pods \"ghost\" not found");
}

}  // namespace
}  // namespace pjemu::store::testing
