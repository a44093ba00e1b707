#include "emulator/api/config_validation.h"

#include <algorithm>

#include "emulator/api/base64.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"
#include "emulator/common/strings.h"

namespace pjemu::api {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

constexpr char kImmutableSet[] = "field is immutable when `immutable` is set";

// The keys of one data map (`data`, `binaryData`) as IsConfigMapKey checks them.
void CheckKeys(const Json& map, const std::string& bag, Errors* errs) {
  for (const auto& [key, value] : ObjectOr(map).items()) {
    for (const std::string& msg : ValidateConfigMapKey(key)) {
      errs->push_back({Type::kInvalid, bag + "[" + key + "]", GoQuote(key), msg});
    }
  }
}

// The decode step: a map of strings, each (when base64) valid base64. Returns the 400 text.
std::optional<std::string> DecodeProblem(const Json& obj, const char* bag, bool base64,
                                         const std::string& kind, std::size_t* total) {
  const Json& map = Field(obj, bag);
  if (map.is_null()) return std::nullopt;
  if (!map.is_object()) {
    return "json: cannot unmarshal " + std::string(map.type_name()) + " into Go struct field " +
           kind + "." + bag + " of type map[string]" + (base64 ? "[]uint8" : "string");
  }
  for (const auto& [key, value] : map.items()) {
    if (!value.is_string() && !value.is_null()) {
      return "json: cannot unmarshal " + std::string(value.type_name()) + " into Go struct field " +
             kind + "." + bag + " of type " + (base64 ? "[]uint8" : "string");
    }
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    if (!base64) {
      *total += text.size();
      continue;
    }
    std::size_t bad = 0;
    auto bytes = DecodeBase64(text, &bad);
    if (!bytes) return "illegal base64 data at input byte " + std::to_string(bad);
    *total += bytes->size();
  }
  return std::nullopt;
}

// `immutable: true` on the stored object freezes the listed bags and the flag itself.
void CheckImmutable(const Json& now, const Json* old, std::initializer_list<const char*> bags,
                    Errors* errs) {
  if (!old || Field(*old, "immutable") != Json(true)) return;
  for (const char* bag : bags) {
    if (Field(now, bag) != Field(*old, bag)) {
      errs->push_back({Type::kForbidden, bag, "", kImmutableSet});
    }
  }
  if (Field(now, "immutable") != Json(true)) {
    errs->push_back({Type::kForbidden, "immutable", "", kImmutableSet});
  }
}

FieldError TooLong(const std::string& field) {
  return {Type::kTooLong, field, "",
          "must have at most " + std::to_string(kMaxConfigDataBytes) + " bytes"};
}

}  // namespace

// ---- ConfigMap ----

Status ValidateConfigMap(const Json& cm, const Json* old, std::vector<std::string>*) {
  std::size_t total = 0;
  for (auto [bag, base64] : {std::pair{"data", false}, std::pair{"binaryData", true}}) {
    if (auto why = DecodeProblem(cm, bag, base64, "ConfigMap", &total)) {
      return UndecodableObject(ConfigMaps(), *why);
    }
  }
  Errors errs;
  CheckKeys(Field(cm, "data"), "data", &errs);
  for (const auto& [key, value] : ObjectOr(Field(cm, "data")).items()) {
    if (Field(cm, "binaryData").contains(key)) {
      errs.push_back({Type::kInvalid, "data[" + key + "]", GoQuote(key),
                      "duplicate of key present in binaryData"});
    }
  }
  CheckKeys(Field(cm, "binaryData"), "binaryData", &errs);
  if (total > kMaxConfigDataBytes) errs.push_back(TooLong("[]"));
  CheckImmutable(cm, old, {"data", "binaryData"}, &errs);
  return InvalidObject(ConfigMaps(), cm, errs);
}

// ---- Secret ----

void DefaultSecret(Json& secret) {
  if (!secret.is_object()) return;
  const Json& string_data = Field(secret, "stringData");
  if (string_data.is_object()) {
    bool all_strings = std::all_of(string_data.begin(), string_data.end(),
                                   [](const Json& v) { return v.is_string(); });
    if (all_strings && (Field(secret, "data").is_object() || Field(secret, "data").is_null())) {
      Json data = ObjectOr(Field(secret, "data"));
      for (const auto& [key, value] : string_data.items()) {
        data[key] = EncodeBase64(value.get<std::string>());
      }
      secret["data"] = std::move(data);
      secret.erase("stringData");
    }
  } else if (string_data.is_null()) {
    secret.erase("stringData");
  }
  if (Str(secret, "type").empty()) secret["type"] = "Opaque";
}

namespace {

// The keys each well-known Secret type requires (ValidateSecret's switch); basic-auth needs one
// of its two keys, reported as both missing.
struct SecretTypeRule {
  const char* type;
  std::vector<const char*> required;
  bool any_of;
};
const std::vector<SecretTypeRule>& SecretTypeRules() {
  static const std::vector<SecretTypeRule> kRules = {
      {"kubernetes.io/dockercfg", {".dockercfg"}, false},
      {"kubernetes.io/dockerconfigjson", {".dockerconfigjson"}, false},
      {"kubernetes.io/basic-auth", {"username", "password"}, true},
      {"kubernetes.io/ssh-auth", {"ssh-privatekey"}, false},
      {"kubernetes.io/tls", {"tls.crt", "tls.key"}, false},
  };
  return kRules;
}

void CheckSecretType(const Json& secret, Errors* errs) {
  const std::string type = Str(secret, "type");
  const Json& data = Field(secret, "data");
  for (const SecretTypeRule& rule : SecretTypeRules()) {
    if (type != rule.type) continue;
    Errors missing;
    for (const char* key : rule.required) {
      if (!data.is_object() || !data.contains(key)) {
        missing.push_back({Type::kRequired, std::string("data[") + key + "]", "", ""});
      }
    }
    if (!rule.any_of || missing.size() == rule.required.size()) {
      errs->insert(errs->end(), missing.begin(), missing.end());
    }
  }
  if (type == "kubernetes.io/service-account-token" &&
      Str(ObjectOr(FieldAt(secret, {"metadata", "annotations"})),
          "kubernetes.io/service-account.name")
          .empty()) {
    errs->push_back(
        {Type::kRequired, "metadata.annotations[kubernetes.io/service-account.name]", "", ""});
  }
}

}  // namespace

Status ValidateSecret(const Json& secret, const Json* old, std::vector<std::string>*) {
  const Json& string_data = Field(secret, "stringData");
  for (const auto& [key, value] : ObjectOr(string_data).items()) {
    if (!value.is_string()) {
      return UndecodableObject(Secrets(),
                               "json: cannot unmarshal " + std::string(value.type_name()) +
                                   " into Go struct field Secret.stringData of type string");
    }
  }
  std::size_t total = 0;
  if (auto why = DecodeProblem(secret, "data", true, "Secret", &total)) {
    return UndecodableObject(Secrets(), *why);
  }
  Errors errs;
  CheckKeys(Field(secret, "data"), "data", &errs);
  if (total > kMaxConfigDataBytes) errs.push_back(TooLong("data"));
  CheckSecretType(secret, &errs);
  if (old && Str(*old, "type") != Str(secret, "type")) {
    errs.push_back({Type::kInvalid, "type", GoQuote(Str(secret, "type")), "field is immutable"});
  }
  CheckImmutable(secret, old, {"data"}, &errs);
  return InvalidObject(Secrets(), secret, errs);
}

// ---- PersistentVolumeClaim ----

const std::vector<std::string>& SupportedAccessModes() {
  static const std::vector<std::string> kModes = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                                  "ReadWriteOncePod"};
  return kModes;
}

namespace {

const std::vector<std::string> kVolumeModes = {"Block", "Filesystem"};

void CheckAccessModes(const Json& spec, const char* required_detail, Errors* errs) {
  const Json& modes = Field(spec, "accessModes");
  if (ArrayOr(modes).empty()) {
    errs->push_back({Type::kRequired, "spec.accessModes", "", required_detail});
    return;
  }
  for (const Json& m : modes) CheckSupported(m, "spec.accessModes", SupportedAccessModes(), errs);
}

// A quantity that must parse and be > 0 (ValidatePositiveQuantityValue).
void CheckPositiveQuantity(const Json& value, const std::string& field, Errors* errs) {
  Result<Quantity> q = Quantity::FromJson(value);
  if (!q.ok()) {
    errs->push_back({Type::kInvalid, field, GoQuote(ValueText(value)), q.status().message()});
  } else if (q->Sign() <= 0) {
    errs->push_back({Type::kInvalid, field, GoQuote(q->String()), "must be greater than zero"});
  }
}

const Json& StorageRequest(const Json& pvc) {
  return FieldAt(pvc, {"spec", "resources", "requests", "storage"});
}

// The PVC spec with the parts an update may change blanked out (ValidatePersistentVolumeClaim
// Update's clones): volumeName once, storageClassName when unset (retroactive default), the
// storage request of a bound claim, volumeAttributesClassName.
Json ComparableSpec(const Json& pvc, const Json& old_pvc, bool bound) {
  Json spec = ObjectOr(Field(pvc, "spec"));
  const Json& old_spec = ObjectOr(Field(old_pvc, "spec"));
  if (Str(old_spec, "volumeName").empty()) spec.erase("volumeName");
  if (Field(old_spec, "storageClassName").is_null()) spec.erase("storageClassName");
  spec.erase("volumeAttributesClassName");
  if (bound && spec.contains("resources") && spec["resources"].is_object() &&
      spec["resources"].contains("requests") && spec["resources"]["requests"].is_object()) {
    spec["resources"]["requests"].erase("storage");
  }
  return spec;
}

void CheckClaimUpdate(const Json& pvc, const Json& old, Errors* errs) {
  const bool bound = Str(Field(old, "status"), "phase") == "Bound";
  Json now = ComparableSpec(pvc, old, bound);
  Json before = ComparableSpec(old, old, bound);
  if (now != before) {
    errs->push_back({Type::kForbidden, "spec", "",
                     "spec is immutable after creation except resources.requests and "
                     "volumeAttributesClassName for bound claims"});
  }
  Result<Quantity> size = Quantity::FromJson(StorageRequest(pvc));
  Result<Quantity> old_size = Quantity::FromJson(StorageRequest(old));
  if (size.ok() && old_size.ok() && size->Cmp(*old_size) < 0) {
    errs->push_back({Type::kForbidden, "spec.resources.requests.storage", "",
                     "field can not be less than previous value"});
  }
}

}  // namespace

void DefaultPersistentVolumeClaim(Json& pvc) {
  if (!pvc.is_object()) return;
  if (pvc.contains("spec") && pvc["spec"].is_object() && Str(pvc["spec"], "volumeMode").empty()) {
    pvc["spec"]["volumeMode"] = "Filesystem";
  }
  if (!pvc.contains("status") || !pvc["status"].is_object()) pvc["status"] = Json::object();
  if (Str(pvc["status"], "phase").empty()) pvc["status"]["phase"] = "Pending";
}

Status ValidatePersistentVolumeClaim(const Json& pvc, const Json* old, std::vector<std::string>*) {
  const Json& spec = Field(pvc, "spec");
  Errors errs;
  CheckAccessModes(spec, "at least 1 access mode is required", &errs);
  const Json& storage = StorageRequest(pvc);
  if (storage.is_null() && Field(spec, "dataSource").is_null() &&
      Field(spec, "dataSourceRef").is_null()) {
    errs.push_back({Type::kRequired, "spec.resources[storage]", "", ""});
  } else if (!storage.is_null()) {
    CheckPositiveQuantity(storage, "spec.resources[storage]", &errs);
  }
  CheckSupported(Field(spec, "volumeMode"), "spec.volumeMode", kVolumeModes, &errs);
  if (old) CheckClaimUpdate(pvc, *old, &errs);
  return InvalidObject(PersistentVolumeClaims(), pvc, errs);
}

// ---- PersistentVolume ----

namespace {

// The volume sources a PV may name, in the order ValidatePersistentVolumeSpec checks them.
const std::vector<const char*>& PersistentVolumeSources() {
  static const std::vector<const char*> kSources = {"hostPath",
                                                    "gcePersistentDisk",
                                                    "awsElasticBlockStore",
                                                    "glusterfs",
                                                    "flocker",
                                                    "nfs",
                                                    "rbd",
                                                    "quobyte",
                                                    "cinder",
                                                    "cephfs",
                                                    "fc",
                                                    "iscsi",
                                                    "azureFile",
                                                    "vsphereVolume",
                                                    "photonPersistentDisk",
                                                    "portworxVolume",
                                                    "azureDisk",
                                                    "scaleIO",
                                                    "local",
                                                    "storageos",
                                                    "csi",
                                                    "flexVolume"};
  return kSources;
}

void CheckPvSource(const char* source, const Json& v, const Json& spec, Errors* errs) {
  const std::string base = std::string("spec.") + source;
  if (std::string(source) == "hostPath") {
    for (FieldError& e : ValidateHostPathSource(v, base)) errs->push_back(std::move(e));
  } else if (std::string(source) == "local") {
    const std::string path = Str(v, "path");
    if (path.empty()) errs->push_back({Type::kRequired, base + ".path", "", ""});
    for (FieldError& e : ValidatePathNoBacksteps(path, base + ".path")) errs->push_back(e);
    if (Field(spec, "nodeAffinity").is_null()) {
      errs->push_back(
          {Type::kRequired, "spec.nodeAffinity", "", "Local volume requires node affinity"});
    }
  }
}

void CheckPvSources(const Json& spec, Errors* errs) {
  int count = 0;
  for (const char* source : PersistentVolumeSources()) {
    const Json& v = Field(spec, source);
    if (v.is_null()) continue;
    if (count++ > 0) {
      errs->push_back({Type::kForbidden, std::string("spec.") + source, "",
                       "may not specify more than 1 volume type"});
      continue;
    }
    CheckPvSource(source, v, spec, errs);
  }
  if (count == 0) errs->push_back({Type::kRequired, "spec", "", "must specify a volume type"});
}

Json PvSource(const Json& pv) {
  Json source = Json::object();
  for (const char* s : PersistentVolumeSources()) {
    const Json& v = FieldAt(pv, {"spec", s});
    if (!v.is_null()) source[s] = v;
  }
  return source;
}

}  // namespace

void DefaultPersistentVolume(Json& pv) {
  if (!pv.is_object()) return;
  if (pv.contains("spec") && pv["spec"].is_object()) {
    Json& spec = pv["spec"];
    if (Str(spec, "persistentVolumeReclaimPolicy").empty()) {
      spec["persistentVolumeReclaimPolicy"] = "Retain";
    }
    if (Str(spec, "volumeMode").empty()) spec["volumeMode"] = "Filesystem";
  }
  if (!pv.contains("status") || !pv["status"].is_object()) pv["status"] = Json::object();
  if (Str(pv["status"], "phase").empty()) pv["status"]["phase"] = "Pending";
}

Status ValidatePersistentVolume(const Json& pv, const Json* old, std::vector<std::string>*) {
  const Json& spec = Field(pv, "spec");
  Errors errs;
  CheckAccessModes(spec, "", &errs);
  const Json& capacity = Field(spec, "capacity");
  if (ObjectOr(capacity).empty()) {
    errs.push_back({Type::kRequired, "spec.capacity", "", ""});
  } else if (!capacity.contains("storage") || capacity.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [k, v] : capacity.items()) names.push_back(k);
    errs.push_back({Type::kNotSupported, "spec.capacity", "map[" + Join(names, " ") + "]",
                    "supported values: \"storage\""});
  } else {
    CheckPositiveQuantity(capacity["storage"], "spec.capacity[storage]", &errs);
  }
  CheckPvSources(spec, &errs);
  CheckSupported(Field(spec, "persistentVolumeReclaimPolicy"), "spec.persistentVolumeReclaimPolicy",
                 {"Delete", "Recycle", "Retain"}, &errs);
  CheckSupported(Field(spec, "volumeMode"), "spec.volumeMode", kVolumeModes, &errs);
  if (old && PvSource(pv) != PvSource(*old)) {
    errs.push_back({Type::kForbidden, "spec.persistentvolumesource", "",
                    "spec.persistentvolumesource is immutable after creation"});
  }
  return InvalidObject(PersistentVolumes(), pv, errs);
}

// ---- StorageClass ----

void DefaultStorageClass(Json& sc) {
  if (!sc.is_object()) return;
  if (Str(sc, "reclaimPolicy").empty()) sc["reclaimPolicy"] = "Delete";
  if (Str(sc, "volumeBindingMode").empty()) sc["volumeBindingMode"] = "Immediate";
}

namespace {

void CheckStorageClassUpdate(const Json& sc, const Json& old, Errors* errs) {
  struct Frozen {
    const char* key;
    const char* message;
  };
  static constexpr Frozen kFrozen[] = {
      {"parameters", "updates to parameters are forbidden."},
      {"provisioner", "updates to provisioner are forbidden."},
      {"reclaimPolicy", "updates to reclaimPolicy are forbidden."},
  };
  for (const Frozen& f : kFrozen) {
    if (Field(sc, f.key) != Field(old, f.key)) {
      errs->push_back({Type::kForbidden, f.key, "", f.message});
    }
  }
  if (Field(sc, "volumeBindingMode") != Field(old, "volumeBindingMode")) {
    errs->push_back({Type::kInvalid, "volumeBindingMode", GoQuote(Str(sc, "volumeBindingMode")),
                     "field is immutable"});
  }
}

}  // namespace

Status ValidateStorageClass(const Json& sc, const Json* old, std::vector<std::string>*) {
  Errors errs;
  const std::string provisioner = Str(sc, "provisioner");
  if (provisioner.empty()) {
    errs.push_back({Type::kRequired, "provisioner", "", ""});
  } else if (provisioner.size() > 63) {
    errs.push_back({Type::kTooLong, "provisioner", "", "must have at most 63 bytes"});
  } else {
    for (const std::string& msg : ValidateQualifiedName(provisioner)) {
      errs.push_back({Type::kInvalid, "provisioner", GoQuote(provisioner), msg});
    }
  }
  CheckSupported(Field(sc, "reclaimPolicy"), "reclaimPolicy", {"Delete", "Retain"}, &errs);
  CheckSupported(Field(sc, "volumeBindingMode"), "volumeBindingMode",
                 {"Immediate", "WaitForFirstConsumer"}, &errs);
  if (old) CheckStorageClassUpdate(sc, *old, &errs);
  return InvalidObject(StorageClasses(), sc, errs);
}

}  // namespace pjemu::api
