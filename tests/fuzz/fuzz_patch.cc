// Fuzz target: merge patch (RFC 7386), JSON patch (RFC 6902) and the strategic-merge subset as
// the store applies them to a stored PyTorchJob and Pod (main resource and status).
// Input: byte 0 picks the object, the patch type and the subresource; the rest is the patch
// body as the API server would pass it (parsed here as JSON; unparsable bodies are skipped).
// Invariants: no crash or escaping exception; a refused patch leaves the object as it was; an
// accepted one keeps name, namespace and uid, and is what a later Get returns.
#include "emulator/api/resources.h"
#include "emulator/common/clock.h"
#include "emulator/store/store.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

Json Job() {
  Json container = {{"name", "pytorch"}, {"image", "pytorch-mnist:1"}, {"args", {"--epochs", "1"}}};
  Json replica = {{"replicas", 1},
                  {"restartPolicy", "OnFailure"},
                  {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", "job"}, {"namespace", "default"}, {"labels", {{"a", "b"}}}}},
          {"spec", {{"pytorchReplicaSpecs", {{"Master", replica}, {"Worker", replica}}}}}};
}

Json Pod() {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "pod"}, {"namespace", "default"}, {"finalizers", {"x/y"}}}},
          {"spec",
           {{"containers",
             {{{"name", "c"}, {"image", "busybox"}, {"env", {{{"name", "A"}, {"value", "1"}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

}  // namespace

int FuzzPatch(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  Json patch = Json::parse(AsText(data + 1, size - 1), nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) return 0;
  FakeClock clock;
  store::Store store(clock);
  bool pod = data[0] & 1;
  const api::ResourceType& type = pod ? api::Pods() : api::PyTorchJobs();
  auto created = store.Create(type, "default", pod ? Pod() : Job());
  FUZZ_CHECK(created.ok());
  const std::string name = pod ? "pod" : "job";
  const api::PatchType kinds[] = {api::PatchType::kMerge, api::PatchType::kJson,
                                  api::PatchType::kStrategicMerge};
  api::PatchType patch_type = kinds[(data[0] >> 1) % 3];
  api::Subresource sub = (data[0] >> 3) & 1 ? api::Subresource::kStatus : api::Subresource::kNone;

  auto result = store.Patch(type, "default", name, patch_type, patch, sub);
  auto now = store.Get(type, "default", name);
  FUZZ_CHECK(now.ok());
  if (!result.ok()) {
    FUZZ_CHECK(*now == *created);
    return 0;
  }
  FUZZ_CHECK(*now == *result);
  FUZZ_CHECK((*result)["metadata"]["name"] == name);
  FUZZ_CHECK((*result)["metadata"]["namespace"] == "default");
  FUZZ_CHECK((*result)["metadata"]["uid"] == (*created)["metadata"]["uid"]);
  return 0;
}

}  // namespace pjemu::fuzz
