#include "emulator/api/pod_validation.h"

#include "emulator/api/image_reference.h"

#include <algorithm>
#include <set>

#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/api/resources.h"
#include "emulator/api/selector.h"

namespace pjemu::api {
namespace {

using Type = FieldError::Type;
using Errors = std::vector<FieldError>;

constexpr char kFileModeError[] = "must be a number between 0 and 0777 (octal), both inclusive";

void Append(Errors* errs, Errors more) {
  for (FieldError& e : more) errs->push_back(std::move(e));
}

void CheckMode(const Json& obj, const char* key, const std::string& field, Errors* errs) {
  auto mode = OptInt(obj, key);
  if (mode && (*mode < 0 || *mode > 0777)) {
    errs->push_back({Type::kInvalid, field + "." + key, std::to_string(*mode), kFileModeError});
  }
}

// validateKeyToPath over items[] (configMap, secret).
void CheckItems(const Json& source, const std::string& path, Errors* errs) {
  const Json& items = Field(source, "items");
  for (std::size_t i = 0; i < ArrayOr(items).size(); ++i) {
    const std::string item = path + ".items[" + std::to_string(i) + "]";
    if (Str(items[i], "key").empty()) errs->push_back({Type::kRequired, item + ".key", "", ""});
    const std::string p = Str(items[i], "path");
    if (p.empty()) errs->push_back({Type::kRequired, item + ".path", "", ""});
    Append(errs, ValidateLocalNonReservedPath(p, item + ".path"));
    CheckMode(items[i], "mode", item, errs);
  }
}

// A source whose `key` names its object (configMap.name, secret.secretName, ...).
void CheckNamed(const Json& source, const char* key, const std::string& path, Errors* errs) {
  if (Str(source, key).empty()) {
    errs->push_back({Type::kRequired, path + "." + key, "", ""});
  }
}

void CheckHostPath(const Json& source, const std::string& path, Errors* errs) {
  Append(errs, ValidateHostPathSource(source, path));
}

// emptyDir.sizeLimit: a quantity, not negative. Upstream refuses an unparsable one while
// decoding (400); pjemu names the field instead (422).
void CheckEmptyDir(const Json& s, const std::string& path, Errors* errs) {
  const Json& limit = Field(s, "sizeLimit");
  if (limit.is_null()) return;
  Result<Quantity> q = Quantity::FromJson(limit);
  if (!q.ok()) {
    errs->push_back({Type::kInvalid, path + ".sizeLimit",
                     limit.is_string() ? GoQuote(limit.get<std::string>()) : limit.dump(),
                     q.status().message()});
  } else if (q->Sign() < 0) {
    errs->push_back({Type::kForbidden, path + ".sizeLimit", "",
                     "SizeLimit field must be a valid resource quantity"});
  }
}

void CheckConfigMap(const Json& s, const std::string& path, Errors* errs) {
  CheckNamed(s, "name", path, errs);
  CheckMode(s, "defaultMode", path, errs);
  CheckItems(s, path, errs);
}
void CheckSecret(const Json& s, const std::string& path, Errors* errs) {
  CheckNamed(s, "secretName", path, errs);
  CheckMode(s, "defaultMode", path, errs);
  CheckItems(s, path, errs);
}
void CheckClaim(const Json& s, const std::string& path, Errors* errs) {
  CheckNamed(s, "claimName", path, errs);
}
void CheckDownwardApi(const Json& s, const std::string& path, Errors* errs) {
  CheckMode(s, "defaultMode", path, errs);
  const Json& items = Field(s, "items");
  for (std::size_t i = 0; i < ArrayOr(items).size(); ++i) {
    const std::string item = path + ".items[" + std::to_string(i) + "]";
    const std::string p = Str(items[i], "path");
    if (p.empty()) errs->push_back({Type::kRequired, item + ".path", "", ""});
    Append(errs, ValidateLocalNonReservedPath(p, item + ".path"));
  }
}

// The volume sources in validateVolumeSource's order, with the checks pjemu makes of each.
struct VolumeSourceRule {
  const char* key;
  void (*check)(const Json& source, const std::string& path, Errors* errs);
};
const std::vector<VolumeSourceRule>& VolumeSources() {
  static const std::vector<VolumeSourceRule> kSources = {{"hostPath", CheckHostPath},
                                                         {"emptyDir", CheckEmptyDir},
                                                         {"gitRepo", nullptr},
                                                         {"gcePersistentDisk", nullptr},
                                                         {"awsElasticBlockStore", nullptr},
                                                         {"secret", CheckSecret},
                                                         {"nfs", nullptr},
                                                         {"iscsi", nullptr},
                                                         {"glusterfs", nullptr},
                                                         {"flocker", nullptr},
                                                         {"persistentVolumeClaim", CheckClaim},
                                                         {"rbd", nullptr},
                                                         {"quobyte", nullptr},
                                                         {"cinder", nullptr},
                                                         {"cephfs", nullptr},
                                                         {"downwardAPI", CheckDownwardApi},
                                                         {"fc", nullptr},
                                                         {"azureFile", nullptr},
                                                         {"vsphereVolume", nullptr},
                                                         {"photonPersistentDisk", nullptr},
                                                         {"portworxVolume", nullptr},
                                                         {"azureDisk", nullptr},
                                                         {"storageos", nullptr},
                                                         {"projected", nullptr},
                                                         {"configMap", CheckConfigMap},
                                                         {"scaleIO", nullptr},
                                                         {"csi", nullptr},
                                                         {"ephemeral", nullptr}};
  return kSources;
}

void CheckVolumeSource(const Json& volume, const std::string& path, Errors* errs) {
  int count = 0;
  for (const VolumeSourceRule& rule : VolumeSources()) {
    const Json& source = Field(volume, rule.key);
    if (source.is_null()) continue;
    if (count++ > 0) {
      errs->push_back(
          {Type::kForbidden, path + "." + rule.key, "", "may not specify more than 1 volume type"});
    } else if (rule.check) {
      rule.check(source, path + "." + rule.key, errs);
    }
  }
  if (count == 0) errs->push_back({Type::kRequired, path, "", "must specify a volume type"});
}

// ValidateVolumes: each source, the name (a DNS-1123 label), unique names. Returns the names.
std::set<std::string> CheckVolumes(const Json& spec, const std::string& spec_path, Errors* errs) {
  std::set<std::string> names;
  const Json& volumes = Field(spec, "volumes");
  for (std::size_t i = 0; i < ArrayOr(volumes).size(); ++i) {
    const std::string path = spec_path + ".volumes[" + std::to_string(i) + "]";
    CheckVolumeSource(volumes[i], path, errs);
    const std::string name = Str(volumes[i], "name");
    if (name.empty()) {
      errs->push_back({Type::kRequired, path + ".name", "", ""});
    } else {
      for (const std::string& msg : ValidateDns1123Label(name)) {
        errs->push_back({Type::kInvalid, path + ".name", GoQuote(name), msg});
      }
    }
    if (!names.insert(name).second) {
      errs->push_back({Type::kDuplicate, path + ".name", GoQuote(name), ""});
    }
  }
  return names;
}

// ValidateVolumeMounts of one container. Upstream reports subPath errors at
// `<container>.volumeMounts.subPath` (no index); pjemu keeps that path.
void CheckMounts(const Json& container, const std::string& path,
                 const std::set<std::string>& volumes, Errors* errs) {
  const std::string mounts_path = path + ".volumeMounts";
  const Json& mounts = Field(container, "volumeMounts");
  std::set<std::string> mount_points;
  for (std::size_t i = 0; i < ArrayOr(mounts).size(); ++i) {
    const std::string idx = mounts_path + "[" + std::to_string(i) + "]";
    const std::string name = Str(mounts[i], "name");
    if (name.empty()) errs->push_back({Type::kRequired, idx + ".name", "", ""});
    if (!volumes.count(name)) errs->push_back({Type::kNotFound, idx + ".name", GoQuote(name), ""});
    const std::string mount_path = Str(mounts[i], "mountPath");
    if (mount_path.empty()) errs->push_back({Type::kRequired, idx + ".mountPath", "", ""});
    if (!mount_points.insert(mount_path).second) {
      errs->push_back({Type::kInvalid, idx + ".mountPath", GoQuote(mount_path), "must be unique"});
    }
    const std::string sub_path = Str(mounts[i], "subPath");
    if (!sub_path.empty()) {
      Append(errs, ValidateLocalDescendingPath(sub_path, mounts_path + ".subPath"));
    }
  }
}

}  // namespace

std::vector<FieldError> PodSpecVolumeErrors(const Json& pod_spec, const std::string& spec_path) {
  Errors errs;
  std::set<std::string> volumes = CheckVolumes(pod_spec, spec_path, &errs);
  for (const char* list : {"containers", "initContainers"}) {
    const Json& containers = Field(pod_spec, list);
    for (std::size_t i = 0; i < ArrayOr(containers).size(); ++i) {
      CheckMounts(containers[i], spec_path + "." + list + "[" + std::to_string(i) + "]", volumes,
                  &errs);
    }
  }
  return errs;
}

Status ValidatePod(const Json& pod, const Json* old, std::vector<std::string>*) {
  if (old) return Status::Ok();
  return InvalidObject(Pods(), pod, PodSpecVolumeErrors(Field(pod, "spec"), "spec"));
}

std::vector<FieldError> PyTorchJobTemplateVolumeErrors(const Json& job) {
  Errors errs;
  for (const std::string& rtype : ReplicaTypes(job)) {
    const Json& spec = FieldAt(ReplicaSpec(job, rtype), {"template", "spec"});
    Append(&errs,
           PodSpecVolumeErrors(spec, "spec.pytorchReplicaSpecs." + rtype + ".template.spec"));
  }
  return errs;
}

void DefaultPod(Json& pod) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return;
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    Json& containers = pod["spec"][list];
    if (!containers.is_array()) {
      if (containers.is_null()) pod["spec"].erase(list);
      continue;
    }
    for (Json& c : containers) {
      if (!c.is_object() || c.contains("imagePullPolicy") || !c.contains("image") ||
          !c["image"].is_string()) {
        continue;
      }
      c["imagePullPolicy"] = DefaultImagePullPolicy(c["image"].get<std::string>());
    }
  }
}

}  // namespace pjemu::api
