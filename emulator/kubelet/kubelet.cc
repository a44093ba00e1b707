#include "emulator/kubelet/kubelet.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/kubelet/node_object.h"
#include "emulator/kubelet/pod_reboot.h"
#include "emulator/kubelet/pod_worker.h"
#include "emulator/process/container_exec.h"
#include "emulator/process/exec_path.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/process/sandbox.h"

namespace pjemu::kubelet {
namespace {

std::string Names(const std::vector<ContainerLogInfo>& list) {
  std::string s;
  for (const auto& c : list) s += (s.empty() ? "" : " ") + c.name;
  return "[" + s + "]";
}

// Every pod, not only this node's: a pod bound here arrives as a MODIFIED of a pod seen before.
client::InformerOptions PodsInformerOptions(const std::string& node_name) {
  client::InformerOptions options;
  options.name = "kubelet " + node_name + " pods";
  return options;
}

// ConfigMaps and Secrets: only their changes matter (the workers read the objects when they
// need them), so the informer's handler keeps nothing.
client::InformerOptions ObjectInformerOptions(const std::string& node_name,
                                              const std::string& plural) {
  client::InformerOptions options;
  options.name = "kubelet " + node_name + " " + plural;
  return options;
}

// The pause program of shared PID namespaces (WorkerContext::pause_argv), from PATH.
constexpr const char* kPauseProgram = "catatonit";

// One line per process, at the first start of a kubelet running real processes, naming the
// isolation this host cannot give and why (the containers then run as without it).
void ReportIsolation(const WorkerContext& ctx, const Status& network) {
  static std::once_flag once;
  std::string off;
  if (!ctx.sandbox) off += "; filesystem: " + process::SandboxAvailable().message();
  if (ctx.sandbox && !ctx.pid_namespaces) {
    off += "; processes: " + process::PidNamespaceAvailable().message();
  }
  if (ctx.pid_namespaces && ctx.pause_argv.empty()) {
    off += "; shared process namespaces: no " + std::string(kPauseProgram) +
           " in PATH (tools/setup installs it)";
  }
  if (ctx.sandbox && !ctx.pod_networks && !network.ok()) off += "; network: " + network.message();
  if (auto* posix = dynamic_cast<const process::PosixProcessRunner*>(&ctx.runner)) {
    if (!posix->cgroups_status().ok()) off += "; limits: " + posix->cgroups_status().message();
  }
  if (off.empty()) return;
  std::call_once(once,
                 [&] { std::fprintf(stderr, "pjemu: kubelet: isolation off%s\n", off.c_str()); });
}

}  // namespace

Kubelet::Kubelet(client::Client& client, EventLoop& loop, process::ProcessRunner& runner,
                 KubeletOptions options)
    : client_(client),
      loop_(loop),
      runner_(runner),
      options_(std::move(options)),
      pods_(client, loop, api::Pods(), PodsInformerOptions(options_.node_name),
            [this](const api::WatchEvent& event) {
              HandlePod(api::WatchTypeName(event.type), event.shared_object());
            }),
      configmaps_(
          client, loop, api::ConfigMaps(), ObjectInformerOptions(options_.node_name, "configmaps"),
          [this](const api::WatchEvent& event) { HandleObject("configmaps", event.object()); }),
      secrets_(client, loop, api::Secrets(), ObjectInformerOptions(options_.node_name, "secrets"),
               [this](const api::WatchEvent& event) { HandleObject("secrets", event.object()); }) {
  host_ip_ = "127.0.0." + std::to_string(options_.node_index + 1);
  if (!options_.network) options_.network = std::make_shared<ClusterNetwork>();
}

Kubelet::~Kubelet() { Stop(); }

Status Kubelet::Start() {
  if (started_) return Status::Ok();
  auto images = ImageMap::LoadLayered({options_.image_map_path, options_.user_image_map_path});
  if (!images.ok()) return images.status();
  NodeResources res = DetectHostResources();
  if (!options_.cpu.empty()) res.cpu = options_.cpu;
  if (!options_.memory.empty()) res.memory = options_.memory;
  res.gpus = !options_.gpu_indices.empty() ? static_cast<int>(options_.gpu_indices.size())
             : options_.gpus                 ? *options_.gpus
                                             : DetectGpuCount();
  res.gpu_replicas = options_.gpu_sharing;
  res.max_pods = options_.max_pods;
  ctx_.reset(new WorkerContext{client_,
                               loop_,
                               runner_,
                               options_,
                               options_.node_name,
                               host_ip_,
                               std::move(*images),
                               options_.network,
                               CrashBackoff(options_.backoff_scale),
                               {},
                               {},
                               {},
                               {},
                               false,
                               false,
                               {},
                               false,
                               0,
                               {},
                               nullptr,
                               {loop_, options_.warm_pods}});
  ctx_->gpus = GpuSlots(res.gpus, res.gpu_replicas, options_.gpu_indices);
  if (options_.image_service) {
    pulls_ = std::make_unique<ImagePulls>(loop_, *options_.image_service, options_.backoff_scale);
    ctx_->pulls = pulls_.get();
  }
  // The simulated runner starts no process: nothing to give a filesystem to.
  bool real = runner_.real();
  if (options_.sandbox == KubeletOptions::Sandbox::kOn) {
    RETURN_IF_ERROR(process::SandboxAvailable().WithContext("sandbox: on"));
    ctx_->sandbox = true;
  } else if (options_.sandbox == KubeletOptions::Sandbox::kAuto) {
    ctx_->sandbox = real && process::SandboxAvailable().ok();
  }
  ctx_->pid_namespaces = ctx_->sandbox && process::PidNamespaceAvailable().ok();
  if (ctx_->pid_namespaces && real) {
    if (auto pause = process::FindExecutable(kPauseProgram, {}); pause.ok()) {
      ctx_->pause_argv = {*pause, "-P"};
    }
  }
  ctx_->node_index = options_.node_index;
  if (ctx_->sandbox && options_.pod_network == KubeletOptions::PodNetwork::kAuto) {
    network_status_ = options_.network->EnableIsolation();
    ctx_->pod_networks = network_status_.ok();
  }
  if (real && options_.sandbox != KubeletOptions::Sandbox::kOff)
    ReportIsolation(*ctx_, network_status_);
  Json node = BuildNode(options_.node_name, host_ip_, options_.node_labels, res, loop_.Now(),
                        options_.node_taints,
                        "10.244." + std::to_string(options_.node_index + 1) + ".0/24");
  auto created = client_.Create(api::Nodes(), "", node);
  if (!created.ok() && created.status().code() == Code::kAlreadyExists) {
    auto current = client_.Get(api::Nodes(), "", options_.node_name);
    if (!current.ok()) return current.status().WithContext("register node");
    node["metadata"] = (*current)["metadata"];
    created = client_.Update(api::Nodes(), "", node);
    if (created.ok()) {
      // A changed spec (the unreachable taints dropped) bumped the resourceVersion.
      node["metadata"] = (*created)["metadata"];
      created = client_.Update(api::Nodes(), "", node, api::Subresource::kStatus);
    }
  }
  if (!created.ok()) return created.status().WithContext("register node " + options_.node_name);
  alive_ = std::make_shared<bool>(true);
  RETURN_IF_ERROR(pods_.Start());
  RETURN_IF_ERROR(configmaps_.Start());
  RETURN_IF_ERROR(secrets_.Start());
  started_ = true;
  pods_.Drain();  // the pods already bound here, now
  std::weak_ptr<bool> alive = alive_;
  heartbeat_ = loop_.PostAfter(options_.node_status_interval, [this, alive] {
    if (!alive.expired()) Heartbeat();
  });
  housekeeping_ = loop_.PostAfter(options_.housekeeping_interval, [this, alive] {
    if (!alive.expired()) Housekeeping();
  });
  return Status::Ok();
}

void Kubelet::Stop() {
  if (!started_) return;
  started_ = false;
  alive_.reset();
  pods_.Stop();
  configmaps_.Stop();
  secrets_.Stop();
  if (heartbeat_) loop_.Cancel(heartbeat_);
  if (housekeeping_) loop_.Cancel(housekeeping_);
  for (const auto& worker : WorkersInOrder()) {
    worker->Kill();
    // Memory-backed volumes do not outlive the node (a reboot empties /dev/shm); the disk ones
    // stay for a kubelet that starts again on the same root_dir.
    std::error_code ec;
    std::filesystem::remove_all(worker->dirs().shm, ec);
  }
  workers_.clear();
}

Status Kubelet::EvictPod(const std::string& ns, const std::string& name,
                         const std::string& message) {
  for (auto& [uid, worker] : workers_) {
    if (worker->ns() != ns || worker->name() != name) continue;
    auto keep = worker;  // Evict may write status, which re-enters HandlePod
    // The eviction manager's message for a memory threshold (pkg/kubelet/eviction/helpers.go).
    keep->Evict(message.empty() ? "The node was low on resource: memory. Threshold quantity: "
                                  "100Mi, available: 51200Ki. "
                                : message);
    return Status::Ok();
  }
  return NotFoundError("pods", name);
}

void Kubelet::HandlePod(const std::string& type, const std::shared_ptr<const Json>& snapshot) {
  const Json& pod = *snapshot;
  const Json& meta = pod["metadata"];
  std::string uid = meta.value("uid", "");
  auto it = workers_.find(uid);
  if (type == "DELETED") {
    if (it != workers_.end()) {
      auto worker = it->second;
      workers_.erase(it);
      worker->Deleted();
    }
    return;
  }
  WakeEndpointWaiters(pod);
  if (api::Str(api::Field(pod, "spec"), "nodeName") != options_.node_name) return;
  if (it == workers_.end()) {
    // A pod that finished before this kubelet started (or on its previous run) stays as is;
    // its logs are still served.
    if (api::IsPodTerminal(pod)) return RememberFinishedPodLogs(*ctx_, pod);
    it = workers_.emplace(uid, std::make_shared<PodWorker>(*ctx_, snapshot)).first;
  }
  auto worker = it->second;  // Update may re-enter through the store's watch notify
  worker->Update(snapshot);
}

void Kubelet::WakeEndpointWaiters(const Json& pod) {
  if (ctx_->endpoint_waiters.empty() || !api::PodReady(pod)) return;
  if (pod["metadata"].contains("deletionTimestamp")) return;
  std::vector<std::shared_ptr<PodWorker>> waiting;  // EndpointReady may re-enter HandlePod
  for (const std::string& uid : ctx_->endpoint_waiters.Selecting(pod)) {
    if (auto it = workers_.find(uid); it != workers_.end()) waiting.push_back(it->second);
  }
  for (auto& worker : waiting) worker->EndpointReady();
}

void Kubelet::HandleObject(const std::string& plural, const Json& object) {
  const Json& meta = object["metadata"];
  std::string ns = meta.value("namespace", "default");
  std::string name = meta.value("name", "");
  // ObjectChanged may re-enter HandlePod: the workers are taken first.
  for (const auto& worker : WorkersInOrder()) {
    if (worker->ns() == ns) worker->ObjectChanged(plural, name);
  }
}

void Kubelet::Housekeeping() {
  for (const auto& worker : WorkersInOrder()) worker->Housekeeping();
  std::weak_ptr<bool> alive = alive_;
  housekeeping_ = loop_.PostAfter(options_.housekeeping_interval, [this, alive] {
    if (!alive.expired()) Housekeeping();
  });
}

std::vector<std::shared_ptr<PodWorker>> Kubelet::WorkersInOrder() const {
  std::vector<std::shared_ptr<PodWorker>> workers;
  workers.reserve(workers_.size());
  for (const auto& [uid, worker] : workers_) workers.push_back(worker);
  std::sort(workers.begin(), workers.end(),
            [](const auto& a, const auto& b) { return a->uid() < b->uid(); });
  return workers;
}

void Kubelet::Heartbeat() {
  auto node = client_.Get(api::Nodes(), "", options_.node_name);
  if (node.ok()) {
    Json status = node->value("status", Json::object());
    status["conditions"] =
        NodeConditions(status.value("conditions", Json::array()), true, loop_.Now());
    Json patch = {{"status", {{"conditions", status["conditions"]}}}};
    (void)client_.Patch(api::Nodes(), "", options_.node_name, api::PatchType::kMerge, patch,
                        api::Subresource::kStatus);
  }
  std::weak_ptr<bool> alive = alive_;
  heartbeat_ = loop_.PostAfter(options_.node_status_interval, [this, alive] {
    if (!alive.expired()) Heartbeat();
  });
}

namespace {

// The container a log or exec request names, with the real server's errors ("" = the only one).
Result<const ContainerLogInfo*> PickContainer(const PodLogInfo& info, const std::string& pod,
                                              const std::string& container) {
  if (container.empty()) {
    if (info.main.size() != 1) {
      std::string msg = "a container name must be specified for pod " + pod +
                        ", choose one of: " + Names(info.main);
      if (!info.init.empty()) msg += " or one of the init containers: " + Names(info.init);
      return BadRequestError(msg);
    }
    return &info.main[0];
  }
  for (const auto* list : {&info.main, &info.init}) {
    for (const auto& x : *list) {
      if (x.name == container) return &x;
    }
  }
  return BadRequestError("container " + container + " is not valid for pod " + pod);
}

}  // namespace

Result<api::LogFile> Kubelet::Find(const api::LogRequest& request) {
  if (!ctx_) return NotFoundError("pods", request.pod);
  std::lock_guard<std::mutex> lock(ctx_->logs_mu);
  auto it = ctx_->logs.find(request.ns + "/" + request.pod);
  if (it == ctx_->logs.end()) return NotFoundError("pods", request.pod);
  const PodLogInfo& info = it->second;
  ASSIGN_OR_RETURN(const ContainerLogInfo* c, PickContainer(info, request.pod, request.container));
  std::string dir = info.dir + "/" + c->name + "/";
  if (request.previous) {
    if (c->restart_count == 0) {
      return BadRequestError("previous terminated container \"" + c->name + "\" in pod \"" +
                             request.pod + "\" not found");
    }
    return api::LogFile{dir + std::to_string(c->restart_count - 1) + ".log", false};
  }
  if (!c->ever_started) {
    return BadRequestError("container \"" + c->name + "\" in pod \"" + request.pod +
                           "\" is waiting to start: " + c->waiting_reason);
  }
  return api::LogFile{dir + std::to_string(c->restart_count) + ".log", c->running};
}

Result<process::ContainerExecSpec> Kubelet::ExecSpec(const api::ExecRequest& request) {
  if (!ctx_) return NotFoundError("pods", request.pod);
  process::ContainerExecSpec spec;
  std::lock_guard<std::mutex> lock(ctx_->logs_mu);
  auto it = ctx_->logs.find(request.ns + "/" + request.pod);
  if (it == ctx_->logs.end()) return NotFoundError("pods", request.pod);
  ASSIGN_OR_RETURN(const ContainerLogInfo* c,
                   PickContainer(it->second, request.pod, request.container));
  if (!runner_.real() || !c->running || c->pid <= 0) {
    return InternalError("container not found (\"" + c->name + "\")");
  }
  spec.target = c->pid;
  spec.env = c->env;
  spec.working_dir = c->working_dir;
  spec.enter_namespaces = c->sandboxed;
  spec.argv = request.command;
  spec.with_stdin = request.with_stdin;
  spec.tty = request.tty;
  return spec;
}

Status Kubelet::Check(const api::ExecRequest& request) { return ExecSpec(request).status(); }

std::string Kubelet::NetworkNamespace(const std::string& ns, const std::string& pod) {
  if (!ctx_) return "";
  std::lock_guard<std::mutex> lock(ctx_->logs_mu);
  auto it = ctx_->logs.find(ns + "/" + pod);
  return it == ctx_->logs.end() ? "" : it->second.netns_path;
}

Result<std::unique_ptr<api::ExecProcess>> Kubelet::Exec(const api::ExecRequest& request) {
  ASSIGN_OR_RETURN(process::ContainerExecSpec spec, ExecSpec(request));
  return process::StartInContainer(spec);
}

}  // namespace pjemu::kubelet
