#include "emulator/storage/volume_controller.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "emulator/api/event.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"
#include "emulator/api/pod_status.h"
#include "emulator/storage/volume_binding.h"

namespace pjemu::storage {
namespace {

using api::Deleting;
using api::Field;
using api::FieldAt;
using api::Str;

constexpr const char* kPvController = "persistentvolume-controller";
constexpr const char* kProvisionerComponent = "rancher.io/local-path_local-path-provisioner";

std::string Uid(const Json& object) { return Str(Field(object, "metadata"), "uid"); }

// The claims a pod's volumes name, as "<ns>/<claimName>".
std::set<std::string> ClaimsOf(const Json& pod) {
  std::set<std::string> out;
  const std::string ns = Str(Field(pod, "metadata"), "namespace");
  for (const Json& v : api::ArrayOr(FieldAt(pod, {"spec", "volumes"}))) {
    std::string claim = Str(Field(v, "persistentVolumeClaim"), "claimName");
    if (!claim.empty()) out.insert(ns + "/" + claim);
  }
  return out;
}

}  // namespace

VolumeController::VolumeController(client::Client& client, EventLoop& loop,
                                   VolumeControllerOptions options)
    : client_(client),
      loop_(loop),
      options_(std::move(options)),
      claim_informer_(client, loop, api::PersistentVolumeClaims(),
                      client::InformerOptions::Named("storage claims"),
                      [this](const api::WatchEvent& e) {
                        if (e.type == api::WatchEvent::Type::kDeleted) said_.erase(Uid(e.object()));
                        client::ApplyToCache(claims_, e);
                        passes_.Trigger();
                      }),
      volume_informer_(client, loop, api::PersistentVolumes(),
                       client::InformerOptions::Named("storage volumes"),
                       [this](const api::WatchEvent& e) {
                         if (e.type == api::WatchEvent::Type::kDeleted)
                           said_.erase(Uid(e.object()));
                         client::ApplyToCache(volumes_, e);
                         passes_.Trigger();
                       }),
      class_informer_(client, loop, api::StorageClasses(),
                      client::InformerOptions::Named("storage classes"),
                      [this](const api::WatchEvent& e) {
                        client::ApplyToCache(classes_, e);
                        passes_.Trigger();
                      }),
      pod_informer_(client, loop, api::Pods(), client::InformerOptions::Named("storage pods"),
                    [this](const api::WatchEvent& e) { OnPod(e); }) {}

VolumeController::~VolumeController() { Stop(); }

Status VolumeController::Start() {
  if (passes_.started()) return Status::Ok();
  if (!std::filesystem::path(options_.storage_root).is_absolute())
    return Status(Code::kInvalid, "storage root \"" + options_.storage_root + "\" is not absolute");
  passes_.Start();
  for (client::Informer* informer :
       {&class_informer_, &claim_informer_, &volume_informer_, &pod_informer_}) {
    if (Status s = informer->Start(); !s.ok()) {
      Stop();
      return s.WithContext("storage");
    }
  }
  class_informer_.Drain();
  if (Status s = EnsureDefaultClass(); !s.ok()) {
    Stop();
    return s.WithContext("storage: default StorageClass");
  }
  passes_.Trigger();
  return Status::Ok();
}

void VolumeController::Stop() {
  if (!passes_.started()) return;
  passes_.Stop();
  for (client::Informer* informer :
       {&class_informer_, &claim_informer_, &volume_informer_, &pod_informer_}) {
    informer->Stop();
  }
}

Status VolumeController::EnsureDefaultClass() {
  if (!DefaultClassName().empty() || classes_.count("standard")) return Status::Ok();
  auto created = client_.Create(api::StorageClasses(), "", DefaultStorageClass());
  if (!created.ok() && created.status().code() != Code::kAlreadyExists) return created.status();
  return Status::Ok();
}

std::string VolumeController::DefaultClassName() const {
  std::vector<const Json*> classes;
  for (const auto& [name, sc] : classes_) classes.push_back(&sc);
  const Json* sc = api::FindDefaultStorageClass(classes);
  return sc ? Str(Field(*sc, "metadata"), "name") : "";
}

const Json* VolumeController::FindClass(const std::string& name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

void VolumeController::OnPod(const api::WatchEvent& event) {
  const std::string uid = Uid(event.object());
  std::set<std::string> claims;
  if (event.type != api::WatchEvent::Type::kDeleted && !api::IsPodTerminal(event.object()))
    claims = ClaimsOf(event.object());
  auto it = pod_claims_.find(uid);
  if (it == pod_claims_.end() && claims.empty()) return;  // no claim then or now
  if (it != pod_claims_.end() && it->second == claims) return;
  if (claims.empty()) {
    pod_claims_.erase(it);
  } else {
    pod_claims_[uid] = std::move(claims);
  }
  passes_.Trigger();
}

void VolumeController::SyncAll() {
  passes_.Draining([this] {  // the caches take in this loop's own earlier writes, without a new pass
    for (client::Informer* informer :
         {&class_informer_, &claim_informer_, &volume_informer_, &pod_informer_}) {
      informer->Drain();
    }
  });
  bool ok = true;
  // Copies: a pass writes, and a write's event may arrive (and change a cache) during it.
  std::map<std::string, Json> claims = claims_, volumes = volumes_;
  for (const auto& [key, claim] : claims) ok = SyncClaim(claim) && ok;
  for (const auto& [name, volume] : volumes) ok = SyncVolume(volume) && ok;
  if (!ok) passes_.ArmOnce(options_.retry_interval);
}

bool VolumeController::SyncClaim(const Json& claim) {
  const std::string ns = Str(Field(claim, "metadata"), "namespace");
  const std::string name = Str(Field(claim, "metadata"), "name");
  if (Deleting(claim)) return ReleaseProtection(claim);
  if (!HasProtection(claim)) {
    auto finalizers = api::ArrayOr(FieldAt(claim, {"metadata", "finalizers"}));
    std::vector<std::string> list;
    for (const Json& f : finalizers)
      if (f.is_string()) list.push_back(f.get<std::string>());
    list.push_back(kPvcProtectionFinalizer);
    if (!PatchFinalizers(claim, list)) return false;
  }
  std::optional<std::string> class_name = ClaimClass(claim);
  if (!class_name) {
    std::string def = DefaultClassName();
    if (!def.empty()) {
      Json patch = {{"spec", {{"storageClassName", def}}}};
      return client_.Patch(api::PersistentVolumeClaims(), ns, name, api::PatchType::kMerge, patch)
          .ok();  // the update's event brings the claim back with its class
    }
    class_name = "";  // binds only to volumes without class, until a default class exists
  }
  if (Str(Field(claim, "status"), "phase") == "Lost") return true;  // as Kubernetes: for good
  if (IsClaimBound(claim)) {
    if (volumes_.count(Str(Field(claim, "spec"), "volumeName"))) return true;
    EventOnce(claim, "Warning", "ClaimLost",
              "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
              kPvController);
    Json lost = {{"status", {{"phase", "Lost"}}}};
    return client_
        .Patch(api::PersistentVolumeClaims(), ns, name, api::PatchType::kMerge, lost,
               api::Subresource::kStatus)
        .ok();
  }
  return SyncUnboundClaim(claim, *class_name);
}

bool VolumeController::SyncUnboundClaim(const Json& claim, const std::string& class_name) {
  const Json* sc = class_name.empty() ? nullptr : FindClass(class_name);
  const bool wffc = sc && WaitsForFirstConsumer(*sc);
  const std::string selected =
      Str(FieldAt(claim, {"metadata", "annotations"}), api::kSelectedNodeAnnotation);
  std::vector<Json> volumes;
  for (const auto& [name, v] : volumes_) volumes.push_back(v);
  if (!wffc || !selected.empty()) {
    if (auto i = MatchVolume(claim, class_name, volumes, wffc ? selected : "")) {
      return Bind(claim, volumes[*i], "");
    }
  }
  // A claim that names its volume waits for that one (none is provisioned for it).
  if (!Str(Field(claim, "spec"), "volumeName").empty()) return true;
  if (class_name.empty()) {
    EventOnce(claim, "Normal", "FailedBinding",
              "no persistent volumes available for this claim and no storage class is set",
              kPvController);
    return true;
  }
  if (!sc) {
    EventOnce(claim, "Warning", "ProvisioningFailed",
              "storageclass.storage.k8s.io \"" + class_name + "\" not found", kPvController);
    return true;
  }
  if (wffc && selected.empty()) {
    EventOnce(claim, "Normal", "WaitForFirstConsumer",
              "waiting for first consumer to be created before binding", kPvController);
    return true;
  }
  const std::string provisioner = Str(*sc, "provisioner");
  EventOnce(claim, "Normal", "ExternalProvisioning",
            "Waiting for a volume to be created either by the external provisioner '" +
                provisioner +
                "' or manually by the system administrator. If volume creation is delayed, "
                "please verify that the provisioner is running and correctly registered.",
            kPvController);
  if (provisioner != kLocalPathProvisioner) return true;  // another provisioner's: none runs
  return Provision(claim, *sc, wffc ? selected : options_.node_name);
}

bool VolumeController::Provision(const Json& claim, const Json& sc, const std::string& node) {
  namespace fs = std::filesystem;
  EventOnce(
      claim, "Normal", "Provisioning",
      "External provisioner is provisioning volume for claim \"" + api::ObjectKey(claim) + "\"",
      kProvisionerComponent);
  const std::string path = VolumeDirectory(options_.storage_root, claim);
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!ec) fs::permissions(path, fs::perms::all, ec);  // 0777 as local-path, whatever the umask
  Json volume = ProvisionedVolume(claim, sc, node, path);
  auto created = ec ? Result<Json>(InternalError(ec.message()))
                    : client_.Create(api::PersistentVolumes(), "", volume);
  if (!created.ok() && created.status().code() == Code::kAlreadyExists) {
    created = client_.Get(api::PersistentVolumes(), "", Str(volume["metadata"], "name"));
  }
  if (!created.ok()) {
    EventOnce(claim, "Warning", "ProvisioningFailed",
              "failed to provision volume with StorageClass \"" +
                  Str(Field(sc, "metadata"), "name") + "\": " + created.status().message(),
              kProvisionerComponent);
    return false;
  }
  EventOnce(claim, "Normal", "ProvisioningSucceeded",
            "Successfully provisioned volume " + Str(volume["metadata"], "name"),
            kProvisionerComponent);
  return Bind(claim, *created, Str(sc, "provisioner"));
}

// The PV controller's order: the volume's claimRef and phase, then the claim and its phase.
bool VolumeController::Bind(const Json& claim, const Json& volume, const std::string& provisioner) {
  const std::string pv = Str(Field(volume, "metadata"), "name");
  const std::string ns = Str(Field(claim, "metadata"), "namespace");
  const std::string name = Str(Field(claim, "metadata"), "name");
  const auto merge = api::PatchType::kMerge;
  const auto status = api::Subresource::kStatus;
  Json bound = {{"status", {{"phase", "Bound"}}}};
  bool ok =
      client_.Patch(api::PersistentVolumes(), "", pv, merge, VolumeBindPatch(volume, claim)).ok() &&
      client_.Patch(api::PersistentVolumes(), "", pv, merge, bound, status).ok() &&
      client_
          .Patch(api::PersistentVolumeClaims(), ns, name, merge,
                 ClaimBindPatch(claim, volume, provisioner))
          .ok() &&
      client_
          .Patch(api::PersistentVolumeClaims(), ns, name, merge, ClaimBoundStatus(volume), status)
          .ok();
  return ok;
}

bool VolumeController::SyncVolume(const Json& volume) {
  const std::string name = Str(Field(volume, "metadata"), "name");
  std::string phase = Str(Field(volume, "status"), "phase");
  if (phase == "Pending") phase.clear();  // the API server's phase for a new volume
  const Json& ref = FieldAt(volume, {"spec", "claimRef"});
  auto set_phase = [&](const std::string& p) {
    Json patch = {{"status", {{"phase", p}}}};
    return client_
        .Patch(api::PersistentVolumes(), "", name, api::PatchType::kMerge, patch,
               api::Subresource::kStatus)
        .ok();
  };
  if (Deleting(volume)) return true;
  if (!ref.is_object()) return phase.empty() ? set_phase("Available") : true;
  if (phase == "Released" || phase == "Failed") return phase == "Released" ? Reclaim(volume) : true;
  auto claim = claims_.find(Str(ref, "namespace") + "/" + Str(ref, "name"));
  const bool gone =
      claim == claims_.end() || (!Str(ref, "uid").empty() && Uid(claim->second) != Str(ref, "uid"));
  if (gone) {
    // A claimRef without uid reserves the volume for a claim yet to come.
    if (Str(ref, "uid").empty()) return phase.empty() ? set_phase("Available") : true;
    return set_phase("Released");  // its event brings the volume back for Reclaim
  }
  if (phase.empty())
    return set_phase(Str(Field(claim->second, "spec"), "volumeName") == name ? "Bound"
                                                                             : "Available");
  return true;
}

bool VolumeController::Reclaim(const Json& volume) {
  const std::string name = Str(Field(volume, "metadata"), "name");
  const std::string policy = ReclaimPolicy(volume);
  if (policy != "Delete") return true;  // Retain (Recycle is gone from Kubernetes): kept
  const bool ours = Str(FieldAt(volume, {"metadata", "annotations"}),
                        "pv.kubernetes.io/provisioned-by") == kLocalPathProvisioner;
  const std::string path = OwnedPath(volume, options_.storage_root);
  if (!ours || path.empty()) {
    std::string message = "error getting deleter volume plugin for volume \"" + name +
                          "\": no deletable volume plugin matched";
    EventOnce(volume, "Warning", "VolumeFailedDelete", message, kPvController);
    Json failed = {{"status", {{"phase", "Failed"}, {"message", message}}}};
    return client_
        .Patch(api::PersistentVolumes(), "", name, api::PatchType::kMerge, failed,
               api::Subresource::kStatus)
        .ok();
  }
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) {
    EventOnce(volume, "Warning", "VolumeFailedDelete",
              "failed to delete " + path + ": " + ec.message(), kProvisionerComponent);
    return false;
  }
  auto deleted = client_.Delete(api::PersistentVolumes(), "", name);
  return deleted.ok() || deleted.status().code() == Code::kNotFound;
}

bool VolumeController::ReleaseProtection(const Json& claim) {
  if (!HasProtection(claim)) return true;
  const std::string key = api::ObjectKey(claim);
  for (const auto& [pod, claims] : pod_claims_) {
    if (claims.count(key)) return true;  // in use: the finalizer stays
  }
  std::vector<std::string> rest;
  for (const Json& f : api::ArrayOr(FieldAt(claim, {"metadata", "finalizers"}))) {
    if (f.is_string() && f != kPvcProtectionFinalizer) rest.push_back(f.get<std::string>());
  }
  return PatchFinalizers(claim, rest);
}

bool VolumeController::HasProtection(const Json& claim) const {
  const Json& finalizers = api::ArrayOr(FieldAt(claim, {"metadata", "finalizers"}));
  return std::find(finalizers.begin(), finalizers.end(), kPvcProtectionFinalizer) !=
         finalizers.end();
}

bool VolumeController::PatchFinalizers(const Json& claim, const std::vector<std::string>& list) {
  Json patch = {{"metadata",
                 {{"finalizers", list.empty() ? Json(nullptr) : Json(list)},
                  {"resourceVersion", Str(Field(claim, "metadata"), "resourceVersion")}}}};
  auto r = client_.Patch(api::PersistentVolumeClaims(), Str(Field(claim, "metadata"), "namespace"),
                         Str(Field(claim, "metadata"), "name"), api::PatchType::kMerge, patch);
  return r.ok() || r.status().code() == Code::kConflict || r.status().code() == Code::kNotFound;
}

void VolumeController::EventOnce(const Json& object, const std::string& type,
                                 const std::string& reason, const std::string& message,
                                 const std::string& component) {
  if (!said_[Uid(object)].insert(reason).second) return;
  (void)client_.Create(api::Events(),
                       Str(Field(object, "metadata"), "namespace").empty()
                           ? "default"
                           : Str(Field(object, "metadata"), "namespace"),
                       api::MakeEvent(api::ObjectReferenceOf(object), type, reason, message,
                                      {component, ""}, loop_.Now()));
}

}  // namespace pjemu::storage
