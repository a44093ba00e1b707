// PodWorker's volumes and container filesystems: volume set-up before the first container
// (FailedMount while it fails), the sandbox's mount plan and /etc/hosts, the retries that
// ConfigMap/Secret changes and housekeeping trigger, and emptyDir sizeLimit eviction.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "emulator/kubelet/pod_worker.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;
constexpr Duration kMountRetryInterval = 1s;

}  // namespace

ObjectLookup PodWorker::Objects() {
  return [this](const api::ResourceType& type, const std::string& name) -> std::optional<Json> {
    auto r = ctx_.client.Get(type, type.namespaced ? ns_ : "", name);
    if (!r.ok()) return std::nullopt;
    return *r;
  };
}

bool PodWorker::SetUpVolumes() {
  ObjectLookup objects = Objects();
  for (const Json& volume : (*pod_)["spec"].value("volumes", Json::array())) {
    std::string name = volume.value("name", "");
    if (volumes_.count(name)) continue;
    auto v = SetUpVolume(*pod_, volume, dirs_, objects);
    if (!v.ok()) {
      if (v.status().message() != mount_error_) {
        mount_error_ = v.status().message();
        Event("Warning", "FailedMount", mount_error_);
      }
      // The volume manager retries on its own (a claim bound, a hostPath made): every second.
      if (!mount_timer_) {
        std::weak_ptr<PodWorker> self = weak_from_this();
        mount_timer_ = ctx_.loop.PostAfter(kMountRetryInterval, [self] {
          if (auto w = self.lock()) w->mount_timer_ = 0, w->Advance();
        });
      }
      return false;
    }
    volumes_[name] = *v;
  }
  volumes_ready_ = true;
  mount_error_.clear();
  return true;
}

std::string PodWorker::EtcHostsText() {
  std::vector<HostsService> services;
  auto list = ctx_.client.List(api::Services(), "");
  if (list.ok()) {
    for (const Json& svc : list->value("items", Json::array())) {
      std::string name = svc["metadata"].value("name", "");
      std::string ns = svc["metadata"].value("namespace", "default");
      if (auto target = Resolve(name + "." + ns, false)) services.push_back({ns, name, target->ip});
    }
  }
  std::sort(services.begin(), services.end(), [](const HostsService& a, const HostsService& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  return EtcHosts(*pod_, state_.pod_ip, services);
}

// A pod with a network of its own gets the kubelet's resolv.conf: the search path of its
// namespace and ndots:5. There is no cluster DNS server yet (names resolve through /etc/hosts),
// and the pod has no route off the machine, so the nameserver is the pod's own 127.0.0.1, where
// nothing listens: a name not in /etc/hosts fails at once (connection refused) rather than after
// the resolver's timeouts. A volume mounted at /etc/resolv.conf wins.
Status PodWorker::AddResolvConf(ContainerMounts& mounts) {
  for (const process::Mount& m : mounts.plan.mounts) {
    if (m.target == "/etc/resolv.conf") return Status::Ok();
  }
  std::string path = dirs_.pod + "/resolv.conf";
  RETURN_IF_ERROR(WriteInPlace(path, "search " + ns_ + ".svc.cluster.local svc.cluster.local " +
                                         "cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n"));
  process::Mount m;
  m.kind = process::Mount::Kind::kBind;
  m.source = path;
  m.target = "/etc/resolv.conf";
  m.read_only = true;
  mounts.plan.mounts.push_back(m);
  return Status::Ok();
}

Result<ContainerMounts> PodWorker::MountsOf(const Json& spec, const std::string& field,
                                            const ContainerState& c, const ImagePlan& plan) {
  MountInputs in;
  in.container_dir = dirs_.pod + "/containers/" + c.name + "/" + std::to_string(c.restart_count);
  in.volumes = volumes_;
  in.pod_shm = dirs_.shm + "/.shm";
  in.etc_hosts = dirs_.pod + "/etc-hosts";
  in.image_files = plan.files;
  in.image_working_dir = plan.working_dir;
  in.hostname = PodHostname(*pod_);
  for (const auto& [name, value] : ctx_.options.image_vars) {
    std::error_code ec;
    if (std::filesystem::path(value).is_absolute() && std::filesystem::exists(value, ec)) {
      in.host_paths.push_back(value);
    }
  }
  ASSIGN_OR_RETURN(ContainerMounts mounts, PlanContainerMounts(spec, field, in));
  std::error_code ec;
  if (c.restart_count >= 2) {  // the kubelet keeps one dead container per container, no more
    std::filesystem::remove_all(
        dirs_.pod + "/containers/" + c.name + "/" + std::to_string(c.restart_count - 2), ec);
  }
  for (const std::string& dir : {in.container_dir + "/tmp", in.pod_shm}) {
    std::filesystem::create_directories(dir, ec);
    ::chmod(dir.c_str(), 01777);  // as /tmp and /dev/shm are
  }
  // Written in place, never renamed: running containers of the pod have it bind-mounted.
  RETURN_IF_ERROR(WriteInPlace(in.etc_hosts, EtcHostsText()));
  if (!netns_path_.empty()) RETURN_IF_ERROR(AddResolvConf(mounts));
  return mounts;
}

void PodWorker::RetryConfigErrors() {
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.phase == Phase::kWaiting && c.timer == 0 && c.reason == "CreateContainerConfigError") {
        c.reason = "ContainerCreating";
        c.message.clear();
      }
    }
  }
}

void PodWorker::ObjectChanged(const std::string& plural, const std::string& name) {
  if (terminating_ || deleted_ || evicting_ || !state_.terminal_phase.empty() || !admitted_) {
    return;
  }
  if (volumes_ready_) {
    // The kubelet's atomic writer: a changed ConfigMap/Secret reaches the mounted files.
    ObjectLookup objects = Objects();
    for (const Json& volume : (*pod_)["spec"].value("volumes", Json::array())) {
      if (!VolumeReferences(volume, plural, name)) continue;
      (void)SetUpVolume(*pod_, volume, dirs_, objects);  // a deleted object keeps the old files
    }
  }
  RetryConfigErrors();
  Advance();
}

void PodWorker::Housekeeping() {
  if (terminating_ || deleted_ || evicting_ || !state_.terminal_phase.empty() || !admitted_) {
    return;
  }
  for (const auto& [name, v] : volumes_) {
    if (v.kind != "emptyDir" || v.size_limit_bytes <= 0) continue;
    if (DirectoryUsage(v.host_path) > v.size_limit_bytes) {
      // The eviction manager's emptyDir check (pkg/kubelet/eviction: emptyDirLimitEviction).
      auto keep = shared_from_this();
      Evict("Usage of EmptyDir volume \"" + name + "\" exceeds the limit \"" + v.size_limit +
            "\". ");
      return;
    }
  }
  bool waiting = !volumes_ready_;
  for (const auto* list : {&state_.init, &state_.main}) {
    for (const auto& c : *list) waiting |= c.reason == "CreateContainerConfigError";
  }
  if (!waiting) return;
  RetryConfigErrors();
  Advance();
}

}  // namespace pjemu::kubelet
