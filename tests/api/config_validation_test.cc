// Given a ConfigMap, Secret, PVC, PV or StorageClass as a client sends it, admission through the
// resource table should default and refuse it with kube-apiserver's exact messages.
#include "emulator/api/config_validation.h"

#include <catch2/catch.hpp>

#include "emulator/api/base64.h"
#include "emulator/api/resources.h"

namespace pjemu::api {
namespace {

Json Named(const char* kind, const char* name) {
  return {{"kind", kind}, {"metadata", {{"name", name}, {"namespace", "default"}}}};
}

// Runs the row's admission as the store does: defaulter, then validator.
Status Admit(const ResourceType& type, Json& object, const Json* old = nullptr) {
  if (type.admission.defaulter) type.admission.defaulter(object);
  return type.admission.validator(object, old, nullptr);
}

std::string Refusal(const ResourceType& type, Json object, const Json* old = nullptr) {
  Status s = Admit(type, object, old);
  return s.ok() ? "OK" : s.message();
}

TEST_CASE("base64 round-trips and reports Go's bad byte", "[api][config]") {
  for (const std::string& text :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    CHECK(DecodeBase64(EncodeBase64(text)) == text);
  }
  CHECK(EncodeBase64("abc") == "YWJj");
  CHECK(EncodeBase64("token") == "dG9rZW4=");
  std::size_t bad = 0;
  CHECK_FALSE(DecodeBase64("ab$d", &bad));
  CHECK(bad == 2);
  CHECK_FALSE(DecodeBase64("abcde", &bad));
  CHECK(bad == 5);
}

TEST_CASE("a Secret's stringData is folded into base64 data and wins", "[api][config]") {
  Json s = Named("Secret", "tok");
  s["data"] = {{"token", EncodeBase64("old")}, {"keep", EncodeBase64("k")}};
  s["stringData"] = {{"token", "abc"}};
  REQUIRE(Admit(Secrets(), s).ok());
  CHECK_FALSE(s.contains("stringData"));
  CHECK(s["data"]["token"] == "YWJj");
  CHECK(s["data"]["keep"] == EncodeBase64("k"));
  CHECK(s["type"] == "Opaque");
}

TEST_CASE("a Secret's keys, base64, size and type are checked", "[api][config]") {
  Json bad_key = Named("Secret", "s");
  bad_key["stringData"] = {{"a b", "x"}};
  CHECK(Refusal(Secrets(), bad_key) ==
        "Secret \"s\" is invalid: data[a b]: Invalid value: \"a b\": a valid config key must "
        "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
        "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  Json dots = Named("Secret", "s");
  dots["data"] = {{"..x", ""}};
  CHECK(Refusal(Secrets(), dots) ==
        "Secret \"s\" is invalid: data[..x]: Invalid value: \"..x\": must not start with '..'");
  Json not_b64 = Named("Secret", "s");
  not_b64["data"] = {{"k", "ab$d"}};
  Status decode = Admit(Secrets(), not_b64);
  CHECK(decode.code() == Code::kBadRequest);
  CHECK(decode.message() ==
        "Secret in version \"v1\" cannot be handled as a Secret: illegal "
        "base64 data at input byte 2");
  Json big = Named("Secret", "s");
  big["stringData"] = {{"k", std::string(kMaxConfigDataBytes + 1, 'x')}};
  CHECK(Refusal(Secrets(), big) ==
        "Secret \"s\" is invalid: data: Too long: must have at most 1048576 bytes");
  Json tls = Named("Secret", "s");
  tls["type"] = "kubernetes.io/tls";
  tls["stringData"] = {{"tls.crt", "c"}};
  CHECK(Refusal(Secrets(), tls) == "Secret \"s\" is invalid: data[tls.key]: Required value");
  Json basic = Named("Secret", "s");
  basic["type"] = "kubernetes.io/basic-auth";
  basic["stringData"] = {{"password", "p"}};
  CHECK(Refusal(Secrets(), basic) == "OK");
}

TEST_CASE("a Secret's type, and its data once immutable, cannot change", "[api][config]") {
  Json old = Named("Secret", "s");
  old["data"] = {{"k", "YWJj"}};
  old["type"] = "Opaque";
  old["immutable"] = true;
  Json now = old;
  now["type"] = "example.com/x";
  now["data"]["k"] = "eHl6";
  CHECK(Refusal(Secrets(), now, &old) ==
        "Secret \"s\" is invalid: [type: Invalid value: \"example.com/x\": field is immutable, "
        "data: Forbidden: field is immutable when `immutable` is set]");
}

TEST_CASE("a ConfigMap's keys, duplicates and total size are checked", "[api][config]") {
  Json cm = Named("ConfigMap", "c");
  cm["data"] = {{"train.py", "print(1)"}, {"a:b", "x"}};
  cm["binaryData"] = {{"train.py", EncodeBase64("x")}};
  Status s = Admit(ConfigMaps(), cm);
  CHECK(s.code() == Code::kInvalid);
  CHECK(s.message() ==
        "ConfigMap \"c\" is invalid: [data[a:b]: Invalid value: \"a:b\": a valid config key must "
        "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
        "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+'), data[train.py]: "
        "Invalid value: \"train.py\": duplicate of key present in binaryData]");
  CHECK(s.details()["causes"][0]["field"] == "data[a:b]");
  CHECK(s.details()["causes"][0]["reason"] == "FieldValueInvalid");
  Json big = Named("ConfigMap", "c");
  big["data"] = {{"a", std::string(kMaxConfigDataBytes, 'x')}, {"b", "y"}};
  CHECK(Refusal(ConfigMaps(), big) ==
        "ConfigMap \"c\" is invalid: []: Too long: must have at most 1048576 bytes");
  Json long_key = Named("ConfigMap", "c");
  long_key["data"] = {{std::string(500000, 'k'), "v"}};
  CHECK(Refusal(ConfigMaps(), long_key).find("must be no more than 253 characters") !=
        std::string::npos);
  Json number = Named("ConfigMap", "c");
  number["data"] = {{"epochs", 3}};
  CHECK(Refusal(ConfigMaps(), number) ==
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal "
        "number into Go struct field ConfigMap.data of type string");
  Json ok = Named("ConfigMap", "c");
  ok["data"] = {{"train.py", "print(1)"}, {"LR", "0.1"}};
  CHECK(Refusal(ConfigMaps(), ok) == "OK");
}

Json Claim() {
  Json pvc = Named("PersistentVolumeClaim", "data");
  pvc["spec"] = {{"accessModes", {"ReadWriteOnce"}},
                 {"resources", {{"requests", {{"storage", "1Gi"}}}}}};
  return pvc;
}

TEST_CASE("a PVC is defaulted Pending/Filesystem and needs modes and storage", "[api][config]") {
  Json pvc = Claim();
  REQUIRE(Admit(PersistentVolumeClaims(), pvc).ok());
  CHECK(pvc["spec"]["volumeMode"] == "Filesystem");
  CHECK(pvc["status"]["phase"] == "Pending");
  Json bare = Named("PersistentVolumeClaim", "data");
  bare["spec"] = Json::object();
  CHECK(Refusal(PersistentVolumeClaims(), bare) ==
        "PersistentVolumeClaim \"data\" is invalid: [spec.accessModes: Required value: at least "
        "1 access mode is required, spec.resources[storage]: Required value]");
  Json odd = Claim();
  odd["spec"]["accessModes"] = {"ReadWriteSometimes"};
  odd["spec"]["resources"]["requests"]["storage"] = "0";
  CHECK(Refusal(PersistentVolumeClaims(), odd) ==
        "PersistentVolumeClaim \"data\" is invalid: [spec.accessModes: Unsupported value: "
        "\"ReadWriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", "
        "\"ReadWriteOnce\", \"ReadWriteOncePod\", spec.resources[storage]: Invalid value: \"0\": "
        "must be greater than zero]");
}

TEST_CASE("a PVC's spec is immutable but for binding and growth when bound", "[api][config]") {
  Json old = Claim();
  REQUIRE(Admit(PersistentVolumeClaims(), old).ok());
  Json bind = old;
  bind["spec"]["volumeName"] = "pvc-1";
  bind["spec"]["storageClassName"] = "standard";
  CHECK(Refusal(PersistentVolumeClaims(), bind, &old) == "OK");
  Json grow = old;
  grow["spec"]["resources"]["requests"]["storage"] = "2Gi";
  const std::string forbidden =
      "PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after "
      "creation except resources.requests and volumeAttributesClassName for bound claims";
  CHECK(Refusal(PersistentVolumeClaims(), grow, &old) == forbidden);  // not bound yet
  Json bound = bind;
  bound["status"]["phase"] = "Bound";
  Json bound_grow = bound;
  bound_grow["spec"]["resources"]["requests"]["storage"] = "2Gi";
  CHECK(Refusal(PersistentVolumeClaims(), bound_grow, &bound) == "OK");
  Json modes = bound;
  modes["spec"]["accessModes"] = {"ReadWriteMany"};
  CHECK(Refusal(PersistentVolumeClaims(), modes, &bound) == forbidden);
  Json shrink = bound;
  shrink["spec"]["resources"]["requests"]["storage"] = "1Mi";
  CHECK(Refusal(PersistentVolumeClaims(), shrink, &bound) ==
        "PersistentVolumeClaim \"data\" is invalid: spec.resources.requests.storage: Forbidden: "
        "field can not be less than previous value");
}

Json Volume() {
  Json pv = Named("PersistentVolume", "pv1");
  pv["spec"] = {{"capacity", {{"storage", "1Gi"}}},
                {"accessModes", {"ReadWriteOnce"}},
                {"hostPath", {{"path", "/srv/data"}}}};
  return pv;
}

TEST_CASE("a PV needs capacity, modes and exactly one source", "[api][config]") {
  Json pv = Volume();
  REQUIRE(Admit(PersistentVolumes(), pv).ok());
  CHECK(pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain");
  CHECK(pv["status"]["phase"] == "Pending");
  Json none = Named("PersistentVolume", "pv1");
  none["spec"] = Json::object();
  CHECK(Refusal(PersistentVolumes(), none) ==
        "PersistentVolume \"pv1\" is invalid: [spec.accessModes: Required value, spec.capacity: "
        "Required value, spec: Required value: must specify a volume type]");
  Json two = Volume();
  two["spec"]["local"] = {{"path", "/mnt"}};
  CHECK(Refusal(PersistentVolumes(), two) ==
        "PersistentVolume \"pv1\" is invalid: spec.local: Forbidden: may not specify more than 1 "
        "volume type");
  Json typed = Volume();
  typed["spec"]["hostPath"]["type"] = "Dir";
  CHECK(Refusal(PersistentVolumes(), typed) ==
        "PersistentVolume \"pv1\" is invalid: spec.hostPath.type: Unsupported value: \"Dir\": "
        "supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", "
        "\"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"");
  Json local = Volume();
  local["spec"].erase("hostPath");
  local["spec"]["local"] = {{"path", "/mnt/../x"}};
  CHECK(Refusal(PersistentVolumes(), local) ==
        "PersistentVolume \"pv1\" is invalid: [spec.local.path: Invalid value: \"/mnt/../x\": "
        "must not contain '..', spec.nodeAffinity: Required value: Local volume requires node "
        "affinity]");
  Json old = Volume();
  REQUIRE(Admit(PersistentVolumes(), old).ok());
  Json moved = old;
  moved["spec"]["hostPath"]["path"] = "/elsewhere";
  CHECK(Refusal(PersistentVolumes(), moved, &old) ==
        "PersistentVolume \"pv1\" is invalid: spec.persistentvolumesource: Forbidden: "
        "spec.persistentvolumesource is immutable after creation");
}

TEST_CASE("a StorageClass is defaulted, needs a provisioner, and is frozen", "[api][config]") {
  Json sc = {{"kind", "StorageClass"}, {"metadata", {{"name", "fast"}}}};
  CHECK(Refusal(StorageClasses(), sc) ==
        "StorageClass.storage.k8s.io \"fast\" is invalid: provisioner: Required value");
  sc["provisioner"] = "rancher.io/local-path";
  REQUIRE(Admit(StorageClasses(), sc).ok());
  CHECK(sc["reclaimPolicy"] == "Delete");
  CHECK(sc["volumeBindingMode"] == "Immediate");
  Json changed = sc;
  changed["provisioner"] = "example.com/nfs";
  changed["parameters"] = {{"a", "b"}};
  changed["volumeBindingMode"] = "WaitForFirstConsumer";
  CHECK(Refusal(StorageClasses(), changed, &sc) ==
        "StorageClass.storage.k8s.io \"fast\" is invalid: [parameters: Forbidden: updates to "
        "parameters are forbidden., provisioner: Forbidden: updates to provisioner are "
        "forbidden., volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is "
        "immutable]");
  Json odd = sc;
  odd["reclaimPolicy"] = "Recycle";
  CHECK(Refusal(StorageClasses(), odd) ==
        "StorageClass.storage.k8s.io \"fast\" is invalid: reclaimPolicy: Unsupported value: "
        "\"Recycle\": supported values: \"Delete\", \"Retain\"");
}

}  // namespace
}  // namespace pjemu::api
