#include "emulator/kubelet/pod_worker.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_resources.h"
#include "emulator/common/packed_json.h"
#include "emulator/image/fs_util.h"
#include "emulator/kubelet/container_env.h"
#include "emulator/kubelet/gpu_injection.h"
#include "emulator/kubelet/pod_mounts.h"
#include "emulator/kubelet/pod_reboot.h"
#include "emulator/process/cri_log_writer.h"
#include "emulator/process/exec_path.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

constexpr int kMaxAddressWaits = 300;
constexpr Duration kAddressWaitInterval = 200ms;
constexpr Duration kDnsWaitInterval = 5ms;

std::string FormatSeconds(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace

PodWorker::PodWorker(WorkerContext& ctx, std::shared_ptr<const Json> snapshot) : ctx_(ctx) {
  SetPod(std::move(snapshot));
  const Json& meta = pod()["metadata"];
  uid_ = meta.value("uid", "");
  ns_ = meta.value("namespace", "default");
  name_ = meta.value("name", "");
  dirs_ = VolumeDirsOf(ctx_.options.root_dir, pod());
  const Json& spec = api::ObjectOr(api::Field(pod(), "spec"));
  for (const char* field : {"initContainers", "containers"}) {
    for (const Json& c : api::ArrayOr(api::Field(spec, field))) {
      ContainerState s;
      s.name = c.value("name", "");
      s.image = c.value("image", "");
      if (std::string(field) == "containers" && spec.contains("initContainers") &&
          !spec["initContainers"].empty()) {
        s.reason = "PodInitializing";
      }
      (std::string(field) == "initContainers" ? state_.init : state_.main).push_back(s);
    }
  }
}

PodWorker::~PodWorker() {
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.timer) ctx_.loop.Cancel(c.timer);
    }
  }
  if (kill_timer_) ctx_.loop.Cancel(kill_timer_);
  if (mount_timer_) ctx_.loop.Cancel(mount_timer_);
  ctx_.endpoint_waiters.Remove(uid_);
  ctx_.warm.Forget(this);
  StopPause();
}

const Json& PodWorker::pod() const {
  if (!pod_) {
    pod_ = UnpackShared(parked_, "a parked pod");
    parked_.clear();
    ctx_.warm.Touch(const_cast<PodWorker*>(this));
  }
  return *pod_;
}

void PodWorker::SetPod(std::shared_ptr<const Json> snapshot) {
  pod_ = std::move(snapshot);
  rv_ = api::Str(api::Field(*pod_, "metadata"), "resourceVersion");
  parked_.clear();
  ctx_.warm.Touch(this);
}

void PodWorker::Parked(std::string packed) {
  parked_ = std::move(packed);
  pod_.reset();
}

const Json& PodWorker::Spec(bool init, std::size_t i) const {
  return pod()["spec"][init ? "initContainers" : "containers"][i];
}

void PodWorker::Update(std::shared_ptr<const Json> snapshot) {
  const std::string rv = api::Str(api::Field(*snapshot, "metadata"), "resourceVersion");
  if (admitted_ && std::find(own_rvs_.begin(), own_rvs_.end(), rv) != own_rvs_.end()) {
    // One of this worker's own status writes coming back: nothing new to act on (a later one
    // of them, or the version held, already has it). The version held is swapped for the
    // delivered snapshot (in process the same one; over a wire the write's answer is freed)
    // unless parked; an older one is dropped.
    if (rv == rv_ && pod_) SetPod(std::move(snapshot));
    return;
  }
  SetPod(std::move(snapshot));
  if (!admitted_) {
    // A pod this kubelet did not start but whose status says it ran: the node rebooted.
    RecoverAfterReboot(pod(), state_, ctx_.loop.Now());
    Admit();
  }
  if (pod()["metadata"].contains("deletionTimestamp") && !terminating_) {
    BeginTermination();
    return;
  }
  Advance();
}

void PodWorker::Admit() {
  admitted_ = true;
  state_.host_ip = ctx_.host_ip;
  if (ctx_.pod_networks) {
    // The pod's sandbox network, as the CNI plugin's ADD gives it before any container starts.
    auto net = ctx_.network->PodSandbox(uid_, ctx_.node_index);
    if (net.ok()) {
      state_.pod_ip = net->ip;
      netns_path_ = net->netns_path;
    } else {
      Event("Warning", "FailedCreatePodSandBox",
            "Failed to create pod sandbox: " + net.status().message() +
                " (the pod keeps the host's network)");
    }
  }
  if (state_.pod_ip.empty()) state_.pod_ip = ctx_.network->PodIp(uid_);
  state_.start_time = ctx_.loop.Now();
  // Device plugin: free GPU units, as many as the pod's limit asks for (gpu_slots.h).
  auto requests = api::PodRequests(pod());
  gpus_ = ctx_.gpus.Allocate(uid_, requests.ok() ? (*requests)["nvidia.com/gpu"] : 0);
  const std::string logs = LogPath("", 0);
  (void)image::fsutil::MakeDirs(logs.substr(0, logs.rfind('/')));
  WriteStatus();  // podIP and hostIP are known before any container starts
}

bool PodWorker::AnyRunning() const {
  for (const auto* list : {&state_.init, &state_.main}) {
    for (const auto& c : *list) {
      if (c.phase == Phase::kRunning) return true;
    }
  }
  return false;
}

void PodWorker::Advance() {
  if (terminating_ || deleted_ || evicting_ || !state_.terminal_phase.empty()) return;
  if (!volumes_ready_ && !SetUpVolumes()) {
    WriteStatus();  // every container stays waiting until the volumes are there
    return;
  }
  for (std::size_t i = 0; i < state_.init.size(); ++i) {
    ContainerState& c = state_.init[i];
    if (c.phase == Phase::kTerminated && c.exit_code == 0) continue;
    if (c.phase == Phase::kWaiting && c.timer == 0 && c.reason != "InvalidImageName" &&
        c.reason != "ErrImagePull" && c.reason != "CreateContainerConfigError" &&
        c.reason != "CreateContainerError") {
      StartContainer(true, i);
    }
    WriteStatus();
    return;  // init containers run one at a time, in order
  }
  for (std::size_t i = 0; i < state_.main.size(); ++i) {
    ContainerState& c = state_.main[i];
    if (c.phase == Phase::kWaiting && c.timer == 0 &&
        (c.reason == "ContainerCreating" || c.reason == "PodInitializing")) {
      StartContainer(false, i);
    }
  }
  FinishIfTerminal();
  WriteStatus();
}

std::string PodWorker::LogPath(const std::string& container, int restart_count) const {
  return ctx_.options.root_dir + "/pods/" + ns_ + "_" + name_ + "_" + uid_ + "/" + container + "/" +
         std::to_string(restart_count) + ".log";
}

std::vector<std::string> PodWorker::KubeletEnv(const Json& container, EnvList& env) {
  // HOSTNAME is the container's hostname: spec.hostname (an Indexed Job's `<job>-<index>`) or
  // the pod's name.
  std::vector<std::string> out = {"PATH=" + std::string(process::kDefaultPath),
                                  "HOSTNAME=" + PodHostname(pod()),
                                  "HOME=" + ctx_.options.root_dir};
  // In a network of the pod's own, gloo's interface is eth0 (pjemu-trainer's default, lo, is
  // the pod's alone); the container's or the image's own value wins.
  if (!netns_path_.empty()) out.push_back("GLOO_SOCKET_IFNAME=eth0");
  if (ctx_.options.in_cluster) {  // the `kubernetes` Service's variables, in every container
    api::InClusterAccess access = *ctx_.options.in_cluster;
    // A pod with a network of its own reaches the API server through the bridge's gateway.
    if (!netns_path_.empty() && ctx_.options.network) {
      Result<std::optional<std::string>> host = ctx_.options.network->HostAddressFor(access.port);
      if (host.ok() && *host) access.host = **host;
      if (!host.ok()) Event("Warning", "FailedToReachAPIServer", host.status().message());
    }
    for (const auto& [k, v] : api::KubernetesServiceEnv(access)) out.push_back(k + "=" + v);
  }
  if (!gpus_.empty()) {
    const std::string ids = ctx_.gpus.VisibleDevices(gpus_);
    if (!LookupEnv(env, "CUDA_VISIBLE_DEVICES")) SetEnv(env, "CUDA_VISIBLE_DEVICES", ids);
    SetEnv(env, "NVIDIA_VISIBLE_DEVICES", ids);
  } else if (ctx_.gpus.units() > 0 && !LookupEnv(env, "CUDA_VISIBLE_DEVICES")) {
    SetEnv(env, "CUDA_VISIBLE_DEVICES", "");  // no GPU requested: none visible, as in a container
  }
  api::ResourceList limits = api::ContainerLimits(container);
  if (limits.count("cpu") && !LookupEnv(env, "OMP_NUM_THREADS")) {
    std::int64_t n = std::max<std::int64_t>(1, (limits["cpu"] + 999) / 1000);
    SetEnv(env, "OMP_NUM_THREADS", std::to_string(n));
  }
  return out;
}

bool PodWorker::MasterAddressReady(const EnvList& env) {
  for (const char* name : {"MASTER_ADDR", "PET_MASTER_ADDR"}) {
    auto value = LookupEnv(env, name);
    if (!value || !ParseServiceHost(*value, ns_)) continue;
    // With cluster DNS: once its records name it (the container's lookup then succeeds), or,
    // as without, once a selected pod has an address: DNS names a headless Service's Ready
    // pods only, and a master that never gets Ready (a command that exits at once) must not
    // hold its workers for a minute.
    if (ctx_.network->DnsResolves(*value, ns_).value_or(false)) continue;
    if (!Resolve(*value, false)) return false;
  }
  return true;
}

void PodWorker::StartContainer(bool init, std::size_t i) {
  ResolvedNames resolved;
  struct Scope {  // a start nested in this one (a process that exits at once) has its own
    PodWorker& w;
    ResolvedNames* outer;
    ~Scope() { w.start_resolved_ = outer; }
  } scope{*this, std::exchange(start_resolved_, &resolved)};
  ContainerState& c = Container(init, i);
  const Json& spec = Spec(init, i);
  std::string field =
      std::string(init ? "spec.initContainers[" : "spec.containers[") + std::to_string(i) + "]";
  auto fail_waiting = [&](const std::string& reason, const std::string& message) {
    c.phase = Phase::kWaiting;
    c.reason = reason;
    c.message = message;
    Event("Warning", reason, "Error: " + message);
  };
  auto env_or = ContainerEnv(pod(), spec, field, Objects());
  if (!env_or.ok()) return fail_waiting("CreateContainerConfigError", env_or.status().message());
  EnvList env = *env_or;
  if (spec.contains("envFrom")) {
    for (const std::string& w : EnvFromWarnings(pod(), spec, Objects())) {
      Event("Warning", kInvalidEnvNamesReason, w);
    }
  }
  std::vector<std::string> base = KubeletEnv(spec, env);
  std::optional<ImagePlan> plan = ResolveImage(init, i, spec, env);
  if (!plan) return;  // waiting for its image
  if (plan->kind == ImagePlan::Kind::kExec && !netns_path_.empty() && ctx_.network->DnsStarting()) {
    // The cluster DNS server that the pod's resolv.conf names is in its first milliseconds
    // (network::Dnsmasq, started without waiting): hold the container (ContainerCreating) until
    // it answers or fails (within 3 s), so that no lookup of the container fails meanwhile.
    c.timer = After(kDnsWaitInterval, [init, i](PodWorker& w) {
      w.Container(init, i).timer = 0;
      w.Advance();
    });
    return;
  }
  if (plan->kind == ImagePlan::Kind::kExec && !MasterAddressReady(env) &&
      ++c.address_waits <= kMaxAddressWaits) {
    // An operator creates a job's pods and Services in one pass, in no fixed order, and env
    // values are rewritten only at launch: hold the container (ContainerCreating) until the
    // Service it must reach resolves, as a process retrying its DNS lookup would wait.
    c.timer = After(kAddressWaitInterval, [init, i](PodWorker& w) {
      w.Container(init, i).timer = 0;
      w.Advance();
    });
    return;
  }
  std::optional<ContainerMounts> mounts;
  if (ctx_.sandbox && plan->kind == ImagePlan::Kind::kExec) {
    auto m = MountsOf(spec, field, c, *plan);
    if (!m.ok()) return fail_waiting("CreateContainerConfigError", m.status().message());
    mounts = std::move(*m);
  }
  c.container_id = "pjemu://" + uid_ + "-" + c.name + "-" + std::to_string(c.restart_count);
  std::string log = LogPath(c.name, c.restart_count);
  (void)image::fsutil::MakeDirs(log.substr(0, log.rfind('/')));
  Event("Normal", "Created", "Created container " + c.name);
  if (plan->kind == ImagePlan::Kind::kWaitForService) return StartBuiltin(init, i, *plan);

  Launch(init, i, ProcessSpecOf(spec, c.name, *plan, env, std::move(base), log, mounts));
}

// The process of a container: the plan's argv, the kubelet's env under the image's under the
// container's own (the Services' hosts and ports rewritten to where they listen; under the
// sandbox only the ports, the names resolving through the pod's /etc/hosts), its working
// directory, log and memory limit.
process::ProcessSpec PodWorker::ProcessSpecOf(const Json& spec, const std::string& name,
                                              const ImagePlan& plan, EnvList env,
                                              std::vector<std::string> base, const std::string& log,
                                              const std::optional<ContainerMounts>& mounts) {
  env = ImageEnvUnder(plan.env, env);  // the image's env lies under the container's
  if (plan.source == ImagePlan::Source::kStore) {
    // An image root: HOME is the image user's (runc's default), not the node's directory.
    std::erase_if(base, [](const std::string& e) { return e.rfind("HOME=", 0) == 0; });
    if (mounts && !mounts->home.empty()) base.push_back("HOME=" + mounts->home);
    if (!gpus_.empty() && !LookupEnv(env, "LD_LIBRARY_PATH")) {
      SetEnv(env, "LD_LIBRARY_PATH", kGpuLibDir);  // where the driver's libraries are bound
    }
  }
  env = RewriteServiceEnv(
      env, [this](const std::string& host) { return Resolve(host, false); },
      !netns_path_.empty() ? ServiceRewrite::kNone
      : mounts             ? ServiceRewrite::kPortsOnly
                           : ServiceRewrite::kNamesAndPorts);
  process::ProcessSpec ps;
  ps.argv = plan.argv;
  for (const auto& [k, v] : env) {
    std::string prefix = k + "=";
    std::erase_if(base, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  }
  ps.env = base;
  for (const auto& [k, v] : env) ps.env.push_back(k + "=" + v);
  ps.working_dir = spec.value("workingDir", "");
  if (mounts) {
    ps.mounts = mounts->plan;
    ps.working_dir = mounts->working_dir;
    // The container's command is PID 1 of its own PID namespace, or, in a pod sharing one
    // among its containers (shareProcessNamespace), one process of the pod's namespace.
    if (!pod()["spec"].value("shareProcessNamespace", false)) {
      ps.own_pid_namespace = ctx_.pid_namespaces;
    } else {
      ps.pid_namespace_of = SharedPidNamespace();
    }
  }
  ps.netns_path = netns_path_;
  ps.log_path = log;
  ps.name = ns_ + "/" + name_ + "/" + name;
  api::ResourceList limits = api::ContainerLimits(spec);
  if (limits.count("memory")) ps.memory_limit_bytes = limits["memory"];
  if (limits.count("cpu")) ps.cpu_limit_millis = limits["cpu"];
  api::ResourceList requests = api::ContainerRequests(spec);
  if (requests.count("cpu")) ps.cpu_request_millis = requests["cpu"];
  return ps;
}

// Starts the container's process: Running with a Started event, or (the runtime could not start
// it) terminated at once, after which the restart policy applies.
void PodWorker::Launch(bool init, std::size_t i, const process::ProcessSpec& ps) {
  ContainerState& c = Container(init, i);
  std::weak_ptr<PodWorker> self = weak_from_this();
  auto pid = ctx_.runner.Start(ps, [self, init, i](const process::ProcessExit& e) {
    if (auto w = self.lock()) w->OnExit(init, i, e);
  });
  c.started_at = ctx_.loop.Now();
  if (!pid.ok()) {
    process::ProcessExit e;
    e.exit_code = pid.status().code() == Code::kNotFound ? 127 : 128;
    e.finished_at = ctx_.loop.Now();
    c.message = pid.status().message();
    Event("Warning", "Failed", "Error: " + c.message);
    OnExit(init, i, e);
    return;
  }
  c.pid = *pid;
  c.env = ps.env;
  c.working_dir = ps.working_dir;
  c.sandboxed = ps.mounts.enabled;
  c.phase = Phase::kRunning;
  c.reason.clear();
  c.message.clear();
  Event("Normal", "Started", "Started container " + c.name);
}

void PodWorker::OnExit(bool init, std::size_t i, const process::ProcessExit& exit) {
  ContainerState& c = Container(init, i);
  if (c.phase == Phase::kTerminated) return;
  if (c.timer) ctx_.loop.Cancel(c.timer), c.timer = 0;
  c.phase = Phase::kTerminated;
  c.pid = 0;
  c.env = std::vector<std::string>();  // what exec needs of a running process: freed with it
  c.working_dir = std::string();
  c.exit_code = exit.exit_code;
  c.signal = exit.signal;
  c.finished_at = exit.finished_at;
  if (!c.message.empty() && exit.exit_code >= 127 && exit.pid == 0) {
    c.reason = "ContainerCannotRun";
  } else {
    c.message.clear();
    c.reason = exit.oom_killed ? "OOMKilled" : exit.exit_code == 0 ? "Completed" : "Error";
  }
  if (terminating_ || deleted_) {
    MaybeFinishTermination();
    return;
  }
  if (evicting_) {
    if (!AnyRunning()) FinishEviction();
    return;
  }
  std::string policy = pod()["spec"].value("restartPolicy", "Always");
  // Init containers are retried on failure unless the policy is Never; success moves on.
  bool restart =
      init ? exit.exit_code != 0 && policy != "Never" : ShouldRestart(policy, exit.exit_code);
  if (restart) {
    Duration delay = ctx_.backoff.NextDelay(uid_ + "/" + c.name, c.finished_at);
    c.last_state = {{"terminated", TerminatedJson(c)}};
    if (delay > Duration(0)) {
      c.phase = Phase::kWaiting;
      c.reason = "CrashLoopBackOff";
      c.message = "back-off " + FormatSeconds(delay) + " restarting failed container=" + c.name +
                  " pod=" + name_ + "_" + ns_ + "(" + uid_ + ")";
      Event("Warning", "BackOff",
            "Back-off restarting failed container " + c.name + " in pod " + name_ + "_" + ns_ +
                "(" + uid_ + ")");
      c.timer = After(delay, [init, i](PodWorker& w) {
        w.Container(init, i).timer = 0;
        w.Restart(init, i);
      });
      WriteStatus();
      return;
    }
    Restart(init, i);
    return;
  }
  Advance();
}

void PodWorker::Restart(bool init, std::size_t i) {
  if (terminating_ || deleted_) return;
  ContainerState& c = Container(init, i);
  ++c.restart_count;
  c.phase = Phase::kWaiting;
  c.reason = "ContainerCreating";
  c.message.clear();
  c.started_at = Time{};
  StartContainer(init, i);
  Advance();
}

void PodWorker::FinishIfTerminal() {
  if (!state_.terminal_phase.empty() || AnyRunning()) return;
  std::string phase = ComputePhase(state_, pod()["spec"].value("restartPolicy", "Always"));
  if (phase != "Succeeded" && phase != "Failed") return;
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.timer) ctx_.loop.Cancel(c.timer), c.timer = 0;
    }
  }
  state_.terminal_phase = phase;
  ReleaseResources();
}

void PodWorker::Evict(const std::string& message) {
  if (terminating_ || deleted_ || evicting_ || !state_.terminal_phase.empty()) return;
  evicting_ = true;
  eviction_message_ = message;
  Event("Warning", "Evicted", message);
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.timer) ctx_.loop.Cancel(c.timer), c.timer = 0;
      if (c.phase != Phase::kRunning) continue;
      Event("Normal", "Killing", "Stopping container " + c.name);
      if (c.pid > 0) {
        (void)ctx_.runner.Signal(c.pid, SIGKILL);
      } else {  // builtin: no process, it ends at once
        process::ProcessExit e{-1, 128 + SIGKILL, SIGKILL, false, ctx_.loop.Now()};
        bool init = list == &state_.init;
        std::size_t i = &c - list->data();
        ctx_.loop.Post([self = weak_from_this(), init, i, e] {
          if (auto w = self.lock()) w->OnExit(init, i, e);
        });
      }
    }
  }
  if (!AnyRunning()) FinishEviction();
}

void PodWorker::FinishEviction() {
  if (!state_.terminal_phase.empty()) return;
  state_.terminal_phase = "Failed";
  state_.terminal_reason = "Evicted";
  state_.terminal_message = eviction_message_;
  // DisruptionTarget is not the kubelet's to compute: it goes into the stored status, which
  // ComputePodStatus keeps (on a copy: the snapshot is immutable).
  Json pod = this->pod();
  Json& status = pod["status"];
  if (!status.is_object()) status = Json::object();
  Json conds = Json::array();
  for (const Json& c : api::ArrayOr(api::Field(status, "conditions"))) {
    if (c.value("type", "") != "DisruptionTarget") conds.push_back(c);
  }
  conds.push_back({{"type", "DisruptionTarget"},
                   {"status", "True"},
                   {"reason", "TerminationByKubelet"},
                   {"message", eviction_message_},
                   {"lastTransitionTime", FormatTime(ctx_.loop.Now())},
                   {"lastProbeTime", nullptr}});
  status["conditions"] = conds;
  SetPod(std::make_shared<const Json>(std::move(pod)));
  ReleaseResources();
  WriteStatus();
}

void PodWorker::ReleaseResources() {
  ctx_.gpus.Release(uid_);
  gpus_.clear();
  StopPause();
}

process::Pid PodWorker::SharedPidNamespace() {
  if (pause_pid_ > 0 || ctx_.pause_argv.empty()) return pause_pid_;
  process::ProcessSpec ps;
  ps.argv = ctx_.pause_argv;
  ps.env = {"PATH=" + std::string(process::kDefaultPath)};
  ps.name = ns_ + "/" + name_ + "/POD";
  ps.own_pid_namespace = true;
  ps.netns_path = netns_path_;
  std::weak_ptr<PodWorker> self = weak_from_this();
  auto pid = ctx_.runner.Start(ps, [self](const process::ProcessExit& e) {
    // Killed from outside (or at the end): the kernel killed the namespace's processes with
    // it; the next container to start gets a new one.
    if (auto w = self.lock(); w && w->pause_pid_ == e.pid) w->pause_pid_ = 0;
  });
  if (!pid.ok()) {
    Event("Warning", "FailedCreatePodSandBox",
          "Failed to create pod sandbox: shared PID namespace: " + pid.status().message() +
              " (the containers keep the host's PID namespace)");
    return 0;
  }
  pause_pid_ = *pid;
  return pause_pid_;
}

void PodWorker::StopPause() {
  if (pause_pid_ > 0) (void)ctx_.runner.Signal(pause_pid_, SIGKILL);
  pause_pid_ = 0;
}

void PodWorker::BeginTermination() {
  terminating_ = true;
  const Json& meta = pod()["metadata"];
  std::int64_t grace = meta.value("deletionGracePeriodSeconds",
                                  pod()["spec"].value("terminationGracePeriodSeconds", 30));
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.timer) ctx_.loop.Cancel(c.timer), c.timer = 0;
      if (c.phase != Phase::kRunning) continue;
      Event("Normal", "Killing", "Stopping container " + c.name);
      if (c.pid == -1) {  // builtin: sh dies of SIGTERM at once
        process::ProcessExit e{-1, 128 + SIGTERM, SIGTERM, false, ctx_.loop.Now()};
        c.message.clear();
        bool init = list == &state_.init;
        std::size_t i = &c - list->data();
        ctx_.loop.Post([self = weak_from_this(), init, i, e] {
          if (auto w = self.lock()) w->OnExit(init, i, e);
        });
      } else {
        (void)ctx_.runner.Signal(c.pid, grace > 0 ? SIGTERM : SIGKILL);
      }
    }
  }
  if (grace > 0) {
    kill_timer_ = After(std::chrono::seconds(grace), [](PodWorker& w) {
      w.kill_timer_ = 0;
      w.Kill();
    });
  }
  MaybeFinishTermination();
}

void PodWorker::Kill() {
  for (auto* list : {&state_.init, &state_.main}) {
    for (auto& c : *list) {
      if (c.phase == Phase::kRunning && c.pid > 0) (void)ctx_.runner.Signal(c.pid, SIGKILL);
    }
  }
}

void PodWorker::MaybeFinishTermination() {
  if (AnyRunning()) {
    WriteStatus();
    return;
  }
  if (kill_timer_) ctx_.loop.Cancel(kill_timer_), kill_timer_ = 0;
  ReleaseResources();
  if (deleted_ || delete_sent_) return;
  WriteStatus();
  delete_sent_ = true;
  api::DeleteOptions opts;
  opts.grace_period_seconds = 0;
  opts.precondition_uid = uid_;
  (void)ctx_.client.Delete(api::Pods(), ns_, name_, opts);
}

void PodWorker::Deleted() {
  deleted_ = true;
  Kill();
  ReleaseResources();
  ctx_.network->ReleasePodIp(uid_);
  // The pod's volumes and container filesystems go with it; hostPath and PV directories stay.
  if (!api::ArrayOr(api::FieldAt(pod(), {"spec", "volumes"})).empty() || ctx_.sandbox) {
    TearDownVolumes(dirs_);
    std::error_code ec;
    std::filesystem::remove_all(dirs_.pod + "/containers", ec);
    std::filesystem::remove(dirs_.pod + "/etc-hosts", ec);
    std::filesystem::remove(dirs_.pod + "/resolv.conf", ec);
  }
  for (const auto* list : {&state_.init, &state_.main}) {
    for (const auto& c : *list) ctx_.backoff.Forget(uid_ + "/" + c.name);
  }
  std::lock_guard<std::mutex> lock(ctx_.logs_mu);
  ctx_.logs.erase(ns_ + "/" + name_);
}

}  // namespace pjemu::kubelet
