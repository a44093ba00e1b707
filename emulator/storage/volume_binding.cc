#include "emulator/storage/volume_binding.h"

#include <algorithm>
#include <filesystem>

#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"
#include "emulator/api/resource_quantity.h"

namespace pjemu::storage {
namespace {

using api::Deleting;
using api::Field;
using api::FieldAt;
using api::Str;

std::int64_t Bytes(const Json& quantity) {
  auto q = api::Quantity::FromJson(quantity);
  return q.ok() ? q->Value() : 0;
}

std::int64_t VolumeCapacity(const Json& volume) {
  return Bytes(FieldAt(volume, {"spec", "capacity", "storage"}));
}

bool HasModes(const Json& volume, const Json& claim) {
  const Json& have = api::ArrayOr(FieldAt(volume, {"spec", "accessModes"}));
  for (const Json& want : api::ArrayOr(FieldAt(claim, {"spec", "accessModes"}))) {
    if (std::find(have.begin(), have.end(), want) == have.end()) return false;
  }
  return true;
}

bool ReservedFor(const Json& volume, const Json& claim) {
  const Json& ref = FieldAt(volume, {"spec", "claimRef"});
  if (!ref.is_object()) return false;
  const Json& meta = Field(claim, "metadata");
  if (Str(ref, "name") != Str(meta, "name") || Str(ref, "namespace") != Str(meta, "namespace"))
    return false;
  return Str(ref, "uid").empty() || Str(ref, "uid") == Str(meta, "uid");
}

}  // namespace

Json DefaultStorageClass() {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata",
           {{"name", "standard"}, {"annotations", {{api::kDefaultClassAnnotation, "true"}}}}},
          {"provisioner", kLocalPathProvisioner},
          {"reclaimPolicy", "Delete"},
          {"volumeBindingMode", "WaitForFirstConsumer"}};
}

bool WaitsForFirstConsumer(const Json& storage_class) {
  return Str(storage_class, "volumeBindingMode") == "WaitForFirstConsumer";
}

std::optional<std::string> ClaimClass(const Json& claim) {
  const Json& name = FieldAt(claim, {"spec", "storageClassName"});
  if (!name.is_string()) return std::nullopt;
  return name.get<std::string>();
}

bool IsClaimBound(const Json& claim) {
  return !Str(Field(claim, "spec"), "volumeName").empty() &&
         Str(Field(claim, "status"), "phase") == "Bound";
}

std::int64_t ClaimRequestBytes(const Json& claim) {
  return Bytes(FieldAt(claim, {"spec", "resources", "requests", "storage"}));
}

std::optional<std::size_t> MatchVolume(const Json& claim, const std::string& claim_class,
                                       const std::vector<Json>& volumes, const std::string& node) {
  const std::string wanted = Str(Field(claim, "spec"), "volumeName");
  const std::int64_t request = ClaimRequestBytes(claim);
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < volumes.size(); ++i) {
    const Json& v = volumes[i];
    if (Deleting(v)) continue;
    const std::string name = Str(Field(v, "metadata"), "name");
    if (!wanted.empty() && name != wanted) continue;
    if (ReservedFor(v, claim)) return i;
    const std::string phase = Str(Field(v, "status"), "phase");
    if (FieldAt(v, {"spec", "claimRef"}).is_object() ||
        (phase != "" && phase != "Pending" && phase != "Available"))
      continue;
    if (Str(Field(v, "spec"), "storageClassName") != claim_class || !HasModes(v, claim)) continue;
    if (VolumeCapacity(v) < request) continue;
    if (!node.empty() && !api::VolumeAdmitsNode(v, node)) continue;
    if (!best || VolumeCapacity(v) < VolumeCapacity(volumes[*best])) best = i;
  }
  return best;
}

std::string VolumeDirectory(const std::string& root, const Json& claim) {
  const Json& meta = Field(claim, "metadata");
  return root + "/pvc-" + Str(meta, "uid") + "_" + Str(meta, "namespace") + "_" + Str(meta, "name");
}

Json ProvisionedVolume(const Json& claim, const Json& storage_class, const std::string& node,
                       const std::string& path) {
  const Json& meta = Field(claim, "metadata");
  const Json& spec = Field(claim, "spec");
  std::string policy = Str(storage_class, "reclaimPolicy");
  Json term = {{"matchExpressions",
                {{{"key", api::kHostnameLabel}, {"operator", "In"}, {"values", {node}}}}}};
  Json claim_ref = {{"apiVersion", "v1"},
                    {"kind", "PersistentVolumeClaim"},
                    {"namespace", Str(meta, "namespace")},
                    {"name", Str(meta, "name")},
                    {"uid", Str(meta, "uid")},
                    {"resourceVersion", Str(meta, "resourceVersion")}};
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolume"},
          {"metadata",
           {{"name", "pvc-" + Str(meta, "uid")},
            {"annotations",
             {{"pv.kubernetes.io/provisioned-by", kLocalPathProvisioner},
              {"local.path.provisioner/selected-node", node}}}}},
          {"spec",
           {{"capacity", {{"storage", FieldAt(spec, {"resources", "requests", "storage"})}}},
            {"accessModes", api::ArrayOr(Field(spec, "accessModes"))},
            {"persistentVolumeReclaimPolicy", policy.empty() ? "Delete" : policy},
            {"storageClassName", Str(Field(storage_class, "metadata"), "name")},
            {"volumeMode", "Filesystem"},
            {"claimRef", claim_ref},
            {"hostPath", {{"path", path}, {"type", "DirectoryOrCreate"}}},
            {"nodeAffinity", {{"required", {{"nodeSelectorTerms", {term}}}}}}}}};
}

Json VolumeBindPatch(const Json& volume, const Json& claim) {
  const Json& meta = Field(claim, "metadata");
  Json patch = {{"spec",
                 {{"claimRef",
                   {{"apiVersion", "v1"},
                    {"kind", "PersistentVolumeClaim"},
                    {"namespace", Str(meta, "namespace")},
                    {"name", Str(meta, "name")},
                    {"uid", Str(meta, "uid")},
                    {"resourceVersion", Str(meta, "resourceVersion")}}}}}};
  if (!FieldAt(volume, {"spec", "claimRef"}).is_object()) {
    patch["metadata"] = {{"annotations", {{"pv.kubernetes.io/bound-by-controller", "yes"}}}};
  }
  return patch;
}

Json ClaimBindPatch(const Json& claim, const Json& volume, const std::string& provisioner) {
  Json annotations = {{"pv.kubernetes.io/bind-completed", "yes"}};
  if (Str(Field(claim, "spec"), "volumeName").empty())
    annotations["pv.kubernetes.io/bound-by-controller"] = "yes";
  if (!provisioner.empty()) {
    annotations["volume.beta.kubernetes.io/storage-provisioner"] = provisioner;
    annotations["volume.kubernetes.io/storage-provisioner"] = provisioner;
  }
  return {{"metadata", {{"annotations", annotations}}},
          {"spec", {{"volumeName", Str(Field(volume, "metadata"), "name")}}}};
}

Json ClaimBoundStatus(const Json& volume) {
  return {{"status",
           {{"phase", "Bound"},
            {"accessModes", api::ArrayOr(FieldAt(volume, {"spec", "accessModes"}))},
            {"capacity", api::ObjectOr(FieldAt(volume, {"spec", "capacity"}))}}}};
}

std::string ReclaimPolicy(const Json& volume) {
  std::string policy = Str(Field(volume, "spec"), "persistentVolumeReclaimPolicy");
  return policy.empty() ? "Retain" : policy;
}

std::string OwnedPath(const Json& volume, const std::string& root) {
  namespace fs = std::filesystem;
  std::string path = Str(FieldAt(volume, {"spec", "hostPath"}), "path");
  if (path.empty() || root.empty()) return "";
  fs::path p = fs::path(path).lexically_normal(), r = fs::path(root).lexically_normal();
  if (!p.is_absolute() || !r.is_absolute()) return "";
  auto rel = p.lexically_relative(r);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return "";
  return p.string();
}

}  // namespace pjemu::storage
