// Given a pod spec's volumes and volumeMounts, the Pods row's admission and the CLI's template
// check should refuse what kube-apiserver refuses, with its messages and field paths.
#include "emulator/api/pod_validation.h"

#include <catch2/catch.hpp>

#include "emulator/api/pytorchjob.h"
#include "emulator/api/resources.h"

namespace pjemu::api {
namespace {

Json Spec(Json volumes, Json mounts) {
  Json c = {{"name", "pytorch"}, {"image", "busybox"}, {"volumeMounts", std::move(mounts)}};
  return {{"containers", Json::array({c})}, {"volumes", std::move(volumes)}};
}

std::vector<std::string> Messages(const Json& spec) {
  std::vector<std::string> out;
  for (const FieldError& e : PodSpecVolumeErrors(spec, "spec")) out.push_back(e.ToString());
  return out;
}

using Lines = std::vector<std::string>;

Json EmptyDir(const char* name) { return {{"name", name}, {"emptyDir", Json::object()}}; }

TEST_CASE("a valid pod spec with every supported volume kind passes", "[api][pod]") {
  Json volumes = {EmptyDir("scratch"),
                  {{"name", "cfg"}, {"configMap", {{"name", "train"}, {"defaultMode", 0644}}}},
                  {{"name", "tok"}, {"secret", {{"secretName", "tok"}}}},
                  {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}},
                  {{"name", "host"}, {"hostPath", {{"path", "/srv"}, {"type", "Directory"}}}}};
  Json mounts = {{{"name", "scratch"}, {"mountPath", "/scratch"}},
                 {{"name", "cfg"}, {"mountPath", "/cfg"}, {"subPath", "a/b"}}};
  CHECK(Messages(Spec(volumes, mounts)).empty());
}

TEST_CASE("a mount naming no volume is Not found", "[api][pod]") {
  CHECK(Messages(Spec(Json::array(), {{{"name", "x"}, {"mountPath", "/x"}}})) ==
        Lines{"spec.containers[0].volumeMounts[0].name: Not found: \"x\""});
}

TEST_CASE("two volumes of one name are a Duplicate value", "[api][pod]") {
  CHECK(Messages(Spec({EmptyDir("x"), EmptyDir("x")}, Json::array())) ==
        Lines{"spec.volumes[1].name: Duplicate value: \"x\""});
}

TEST_CASE("a subPath must be relative and without '..', as upstream words it", "[api][pod]") {
  // Upstream reports a subPath at volumeMounts.subPath, without the mount's index.
  CHECK(Messages(Spec(Json::array({EmptyDir("x")}),
                      {{{"name", "x"}, {"mountPath", "/x"}, {"subPath", "../x"}}})) ==
        Lines{"spec.containers[0].volumeMounts.subPath: Invalid value: \"../x\": must not "
              "contain '..'"});
  CHECK(Messages(Spec(Json::array({EmptyDir("x")}),
                      {{{"name", "x"}, {"mountPath", "/x"}, {"subPath", "/etc"}}})) ==
        Lines{"spec.containers[0].volumeMounts.subPath: Invalid value: \"/etc\": must be a "
              "relative path"});
}

TEST_CASE("a volume needs exactly one source", "[api][pod]") {
  CHECK(Messages(Spec({{{"name", "x"}}}, Json::array())) ==
        Lines{"spec.volumes[0]: Required value: must specify a volume type"});
  CHECK(
      Messages(Spec({{{"name", "x"}, {"emptyDir", Json::object()}, {"configMap", {{"name", "c"}}}}},
                    Json::array())) ==
      Lines{"spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type"});
}

TEST_CASE("hostPath type, names of sources, modes and item paths are checked", "[api][pod]") {
  Json volumes = {
      {{"name", "h"}, {"hostPath", {{"path", "/srv"}, {"type", "Folder"}}}},
      {{"name", "c"}, {"configMap", {{"defaultMode", 01000}}}},
      {{"name", "s"},
       {"secret", {{"secretName", "s"}, {"items", {{{"key", "k"}, {"path", "../k"}}}}}}},
      {{"name", "p"}, {"persistentVolumeClaim", Json::object()}},
      {{"name", "Bad_Name"}, {"emptyDir", Json::object()}}};
  Lines got = Messages(Spec(volumes, Json::array()));
  REQUIRE(got.size() == 6);
  CHECK(got[0] ==
        "spec.volumes[0].hostPath.type: Unsupported value: \"Folder\": supported values: \"\", "
        "\"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", "
        "\"FileOrCreate\", \"Socket\"");
  CHECK(got[1] == "spec.volumes[1].configMap.name: Required value");
  CHECK(got[2] ==
        "spec.volumes[1].configMap.defaultMode: Invalid value: 512: must be a number "
        "between 0 and 0777 (octal), both inclusive");
  CHECK(got[3] ==
        "spec.volumes[2].secret.items[0].path: Invalid value: \"../k\": must not "
        "contain '..'");
  CHECK(got[4] == "spec.volumes[3].persistentVolumeClaim.claimName: Required value");
  CHECK(got[5].rfind("spec.volumes[4].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
                     "label",
                     0) == 0);
}

TEST_CASE("an emptyDir's sizeLimit must be a quantity, not negative", "[api][pod]") {
  CHECK(
      Messages(Spec({{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "2Gi"}}}}},
                    Json::array()))
          .empty());
  CHECK(Messages(Spec({{{"name", "shm"}, {"emptyDir", {{"sizeLimit", "-1Gi"}}}}}, Json::array())) ==
        Lines{"spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid "
              "resource quantity"});
  Lines bad =
      Messages(Spec({{{"name", "shm"}, {"emptyDir", {{"sizeLimit", "lots"}}}}}, Json::array()));
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].rfind("spec.volumes[0].emptyDir.sizeLimit: Invalid value: \"lots\": quantities "
                     "must match the regular expression",
                     0) == 0);
}

TEST_CASE("a mountPath must be unique within one container", "[api][pod]") {
  CHECK(Messages(Spec({EmptyDir("a"), EmptyDir("b")}, {{{"name", "a"}, {"mountPath", "/d"}},
                                                       {{"name", "b"}, {"mountPath", "/d"}}})) ==
        Lines{"spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/d\": must be "
              "unique"});
}

TEST_CASE("the Pods row refuses a bad pod on create only", "[api][pod]") {
  Json pod = {{"kind", "Pod"},
              {"metadata", {{"name", "j-worker-0"}}},
              {"spec", Spec(Json::array(), {{{"name", "x"}, {"mountPath", "/x"}}})}};
  REQUIRE(Pods().admission.validator != nullptr);
  Status s = Pods().admission.validator(pod, nullptr, nullptr);
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message() ==
        "Pod \"j-worker-0\" is invalid: spec.containers[0].volumeMounts[0].name: "
        "Not found: \"x\"");
  CHECK(s.details()["causes"][0]["reason"] == "FieldValueNotFound");
  CHECK(Pods().admission.validator(pod, &pod, nullptr).ok());
}

TEST_CASE("a PyTorchJob's templates are checked under their replica path", "[api][pod]") {
  Json worker = {{"replicas", 1},
                 {"template", {{"spec", Spec({EmptyDir("x"), EmptyDir("x")}, Json::array())}}}};
  Json job = {{"apiVersion", kPyTorchJobApiVersion},
              {"kind", kPyTorchJobKind},
              {"metadata", {{"name", "j"}}},
              {"spec", {{"pytorchReplicaSpecs", {{kWorker, worker}}}}}};
  std::vector<FieldError> errs = PyTorchJobTemplateVolumeErrors(job);
  REQUIRE(errs.size() == 1);
  CHECK(errs[0].ToString() ==
        "spec.pytorchReplicaSpecs.Worker.template.spec.volumes[1].name: Duplicate value: \"x\"");
}

}  // namespace
}  // namespace pjemu::api
