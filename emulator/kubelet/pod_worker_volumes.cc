// PodWorker's volumes and container filesystems: volume set-up before the first container
// (FailedMount while it fails), the sandbox's mount plan and /etc/hosts, the retries that
// ConfigMap/Secret changes and housekeeping trigger, and emptyDir sizeLimit eviction.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "emulator/api/json_fields.h"
#include "emulator/kubelet/pod_worker.h"

#include "emulator/kubelet/gpu_injection.h"
#include "emulator/kubelet/image_user.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;
constexpr Duration kMountRetryInterval = 1s;
// The admission plugin names it kube-api-access-<random>; it never reaches the stored spec here.
constexpr char kKubeApiAccess[] = "kube-api-access";

// Whether the container already mounts something at the service-account path (the admission
// plugin then leaves that container alone).
bool MountsServiceAccountPath(const Json& container) {
  for (const Json& vm : api::ArrayOr(api::Field(container, "volumeMounts"))) {
    if (vm.value("mountPath", "") == api::kServiceAccountMountPath) return true;
  }
  return false;
}

}  // namespace

ObjectLookup PodWorker::Objects() {
  return [this](const api::ResourceType& type, const std::string& name) -> std::optional<Json> {
    auto r = ctx_.client.Get(type, type.namespaced ? ns_ : "", name);
    if (!r.ok()) return std::nullopt;
    return *r;
  };
}

Result<std::string> PodWorker::FetchToken(const Json& source) {
  const auto& access = ctx_.options.in_cluster;
  api::TokenRequest r;
  r.ns = ns_;
  r.service_account = api::PodServiceAccountName(pod());
  auto sa = ctx_.client.Get(api::ServiceAccounts(), ns_, r.service_account);
  if (!sa.ok()) return sa.status();  // serviceaccounts "x" not found: retried
  r.service_account_uid = (*sa)["metadata"].value("uid", "");
  r.pod = name_;
  r.pod_uid = uid_;
  r.node = ctx_.node_name;
  if (source.contains("audience") && source["audience"].is_string()) {
    r.audiences.push_back(source["audience"].get<std::string>());
  }
  if (source.contains("expirationSeconds") && source["expirationSeconds"].is_number_integer()) {
    r.expiration_seconds = source["expirationSeconds"].get<std::int64_t>();
  }
  return access->issuer->Issue(r);
}

TokenFetcher PodWorker::Tokens() {
  if (!ctx_.options.in_cluster || ctx_.options.in_cluster->issuer == nullptr) return nullptr;
  return [this](const Json& source) { return FetchToken(source); };
}

Result<bool> PodWorker::SetUpServiceAccountVolume(const ObjectLookup& objects) {
  if (!ctx_.options.in_cluster || volumes_.count(kKubeApiAccess)) return true;
  const Json spec = pod()["spec"];
  bool wanted = false;
  for (const char* list : {"initContainers", "containers"}) {
    for (const Json& c : spec.value(list, Json::array())) wanted |= !MountsServiceAccountPath(c);
  }
  if (!wanted) return true;
  auto sa = objects(api::ServiceAccounts(), api::PodServiceAccountName(pod()));
  if (!api::AutomountServiceAccountToken(pod(), sa ? &*sa : nullptr)) return true;
  TokenFetcher tokens = Tokens();
  ASSIGN_OR_RETURN(PodVolume v, SetUpVolume(pod(), api::KubeApiAccessVolume(kKubeApiAccess), dirs_,
                                            objects, &tokens));
  volumes_[kKubeApiAccess] = v;
  return true;
}

bool PodWorker::SetUpVolumes() {
  ObjectLookup objects = Objects();
  TokenFetcher tokens = Tokens();
  const Json no_volumes = Json::array();
  const Json& spec_volumes =
      pod()["spec"].contains("volumes") ? pod()["spec"]["volumes"] : no_volumes;
  for (std::size_t i = 0; i <= spec_volumes.size(); ++i) {
    Result<PodVolume> v = PodVolume{};
    std::string name = kKubeApiAccess;
    if (i == spec_volumes.size()) {
      auto sa = SetUpServiceAccountVolume(objects);
      if (sa.ok()) break;
      v = sa.status();
    } else {
      const Json& volume = spec_volumes[i];
      name = volume.value("name", "");
      if (volumes_.count(name)) continue;
      v = SetUpVolume(pod(), volume, dirs_, objects, &tokens);
    }
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

// The pods of a headless Service that name it as their subdomain, each as
// `<hostname>.<subdomain>` (EtcHosts adds the namespace forms): what cluster DNS answers for a
// JobSet's pods.
void PodWorker::AddHeadlessPods(const Json& svc, std::vector<HostsService>* out) {
  const Json& spec = api::ObjectOr(api::Field(svc, "spec"));
  if (spec.value("clusterIP", "") != "None") return;
  const std::string name = svc["metadata"].value("name", "");
  const std::string ns = svc["metadata"].value("namespace", "default");
  api::ListOptions opts;
  opts.label_selector = ServiceSelector(svc);
  if (opts.label_selector.empty()) return;
  auto pods = ctx_.client.List(api::Pods(), ns, opts);
  if (!pods.ok()) return;
  for (const Json& p : api::ArrayOr(api::Field(*pods, "items"))) {
    const Json& pspec = api::ObjectOr(api::Field(p, "spec"));
    const std::string ip = api::ObjectOr(api::Field(p, "status")).value("podIP", "");
    if (pspec.value("subdomain", "") != name || ip.empty() || api::Deleting(p)) continue;
    out->push_back({ns, PodHostname(p) + "." + name, ip});
  }
}

std::string PodWorker::EtcHostsText() {
  std::vector<HostsService> services;
  // With cluster DNS the Services resolve there, as on a cluster; the file keeps the pod's own.
  auto list = ctx_.network->dns_server().empty() ? ctx_.client.List(api::Services(), "")
                                                 : Result<Json>(Json::object());
  if (list.ok()) {
    for (const Json& svc : list->value("items", Json::array())) {
      std::string name = svc["metadata"].value("name", "");
      std::string ns = svc["metadata"].value("namespace", "default");
      if (auto target = Resolve(name + "." + ns, false)) services.push_back({ns, name, target->ip});
      AddHeadlessPods(svc, &services);
    }
  }
  std::sort(services.begin(), services.end(), [](const HostsService& a, const HostsService& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  return EtcHosts(pod(), state_.pod_ip, services);
}

// A pod with a network of its own gets the kubelet's resolv.conf: the search path of its
// namespace and ndots:5, and the cluster DNS server (network::ClusterServices) as nameserver.
// Without one (dnsmasq missing) the nameserver is the pod's own 127.0.0.1, where nothing
// listens: a name not in /etc/hosts fails at once (connection refused) rather than after the
// resolver's timeouts. A volume mounted at /etc/resolv.conf wins.
Status PodWorker::AddResolvConf(ContainerMounts& mounts) {
  for (const process::Mount& m : mounts.plan.mounts) {
    if (m.target == "/etc/resolv.conf") return Status::Ok();
  }
  std::string path = dirs_.pod + "/resolv.conf";
  std::string server = ctx_.network->dns_server();
  RETURN_IF_ERROR(WriteInPlace(path, "search " + ns_ + ".svc.cluster.local svc.cluster.local " +
                                         "cluster.local\nnameserver " +
                                         (server.empty() ? "127.0.0.1" : server) +
                                         "\noptions ndots:5\n"));
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
  in.hostname = PodHostname(pod());
  std::string home;
  if (plan.source == ImagePlan::Source::kStore) {  // the image's own root and user
    in.root_layers = plan.layers;
    ASSIGN_OR_RETURN(ImageUser user, ResolveImageUser(plan.layers, plan.user, pod(), spec));
    in.user = user.identity;
    home = user.home;
    in.devices = GpuDeviceNodes(ctx_.gpus.PhysicalIndices(gpus_));
    if (!gpus_.empty()) in.driver_files = GpuDriverMounts();
  }
  for (const auto& [name, value] : ctx_.options.image_vars) {
    std::error_code ec;
    if (std::filesystem::path(value).is_absolute() && std::filesystem::exists(value, ec)) {
      in.host_paths.push_back(value);
    }
  }
  ASSIGN_OR_RETURN(ContainerMounts mounts,
                   PlanContainerMounts(WithServiceAccountMount(spec), field, in));
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
  mounts.home = home;
  return mounts;
}

// The container as the ServiceAccount admission plugin leaves it: the kube-api-access volume
// mounted read-only at the service-account path (when the pod got one).
Json PodWorker::WithServiceAccountMount(const Json& container) const {
  if (!volumes_.count(kKubeApiAccess) || MountsServiceAccountPath(container)) return container;
  Json out = container;
  if (!out.contains("volumeMounts") || !out["volumeMounts"].is_array()) {
    out["volumeMounts"] = Json::array();
  }
  out["volumeMounts"].push_back({{"name", kKubeApiAccess},
                                 {"mountPath", api::kServiceAccountMountPath},
                                 {"readOnly", true}});
  return out;
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
    TokenFetcher tokens = Tokens();
    for (const Json& volume : api::ArrayOr(api::FieldAt(pod(), {"spec", "volumes"}))) {
      if (!VolumeReferences(volume, plural, name)) continue;
      // A deleted object keeps the old files.
      (void)SetUpVolume(pod(), volume, dirs_, objects, &tokens);
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
