// PodWorker (private to the kubelet): drives one pod bound to the node through its life:
// admission (pod IP, GPUs, startTime), init containers in order, containers, exits and
// restarts (CrashLoopBackOff), the wait-for-service builtin, graceful termination on
// deletionTimestamp, and the status writes after every change. Its volumes are set up before
// the first container (a failure keeps every container waiting, with a FailedMount event, until
// a retry succeeds) and removed when the pod is deleted. Level-based: Update() may be
// called with any newer version of the pod, any number of times.
// Thread safety: EventLoop thread only; the log index in WorkerContext has its own mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/event_loop.h"
#include "emulator/kubelet/crash_backoff.h"
#include "emulator/kubelet/endpoint_waiters.h"
#include "emulator/kubelet/gpu_slots.h"
#include "emulator/kubelet/image_map.h"
#include "emulator/kubelet/image_pulls.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/kubelet/pod_mounts.h"
#include "emulator/kubelet/pod_network.h"
#include "emulator/kubelet/pod_state.h"
#include "emulator/kubelet/volumes.h"
#include "emulator/kubelet/warm_pods.h"
#include "emulator/process/process_runner.h"

namespace pjemu::kubelet {

// What Find() and Exec() need to know about a container, published by the workers.
struct ContainerLogInfo {
  std::string name;
  int restart_count = 0;
  bool running = false;
  bool ever_started = false;
  std::string waiting_reason;
  // For exec (Kubelet::Exec): the running process (0: none) and how it was started.
  process::Pid pid = 0;
  std::vector<std::string> env;
  std::string working_dir;
  bool sandboxed = false;
};
struct PodLogInfo {
  std::string dir;  // root_dir/pods/<ns>_<pod>_<uid>
  std::string netns_path;  // the pod's network namespace ("" = the host's)
  std::vector<ContainerLogInfo> init;
  std::vector<ContainerLogInfo> main;
};

// Everything a worker shares with its kubelet.
struct WorkerContext {
  client::Client& client;
  EventLoop& loop;
  process::ProcessRunner& runner;
  const KubeletOptions& options;
  std::string node_name;
  std::string host_ip;
  ImageMap images;
  std::shared_ptr<ClusterNetwork> network;
  CrashBackoff backoff;
  GpuSlots gpus;  // the node's nvidia.com/gpu units and who holds them
  std::mutex logs_mu;
  std::map<std::string, PodLogInfo> logs;  // "ns/name" -> info; GUARDED_BY(logs_mu)
  ImageCache image_cache;                  // the node's images, unless options.image_puller
  bool sandbox = false;                    // containers get a MountPlan (KubeletOptions::sandbox)
  bool pid_namespaces = false;  // under the sandbox, each container is PID 1 of its own namespace
  // The init of a pod's shared PID namespace (shareProcessNamespace), as the pause container
  // is on a cluster: `catatonit -P` (reaps the orphans, ignores signals). Empty: such pods'
  // containers keep the host's PID namespace.
  std::vector<std::string> pause_argv;
  bool pod_networks = false;    // each pod in a network namespace of its own (network->isolated())
  int node_index = 0;
  EndpointWaiters endpoint_waiters;        // wait-for-service builtins, woken by pod events
  ImagePulls* pulls = nullptr;  // the node's image store and pulls (null: image maps only)
  WarmPods warm;                // which workers keep their pod as a tree

  // The image pull step: options.image_puller when set, else image_cache.
  ImagePuller& puller() { return options.image_puller ? *options.image_puller : image_cache; }
};

class PodWorker : public std::enable_shared_from_this<PodWorker>, private Parkable {
 public:
  // `pod` is the informer's immutable snapshot (shared with the store and the other
  // watchers); the worker keeps it, not a copy, until ctx.warm parks it. Must not be null.
  PodWorker(WorkerContext& ctx, std::shared_ptr<const Json> pod);
  ~PodWorker();

  // A newer version of the pod (ADDED/MODIFIED), as the snapshot the constructor takes.
  void Update(std::shared_ptr<const Json> snapshot);
  // The pod is gone from the store: SIGKILL whatever runs, release resources.
  void Deleted();
  // SIGKILL everything (kubelet Stop); no status is written.
  void Kill();
  // The eviction manager's hard eviction: SIGKILL every container (grace 0), then phase
  // Failed, reason Evicted, the message, and DisruptionTarget (TerminationByKubelet).
  void Evict(const std::string& message);
  // A ConfigMap or Secret (plural "configmaps"/"secrets") of the pod's namespace was added,
  // changed or deleted: containers waiting in CreateContainerConfigError and failed mounts are
  // retried, and the configMap/secret/projected volumes showing it are rewritten.
  void ObjectChanged(const std::string& plural, const std::string& name);
  // A pod selected by a Service this pod's wait-for-service builtin waits for became Ready
  // (EndpointWaiters): every waiting builtin tries its lookup now instead of at its next try.
  void EndpointReady();
  // The kubelet's periodic pass: emptyDir sizeLimit eviction, retries of failed mounts and of
  // env references.
  void Housekeeping();
  const std::string& uid() const { return uid_; }
  // The pod as last seen, unparked when parked (a reference valid until the current EventLoop task
  // ends or the pod is replaced).
  const Json& pod() const;
  const PodVolumeDirs& dirs() const { return dirs_; }
  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }

 private:
  ContainerState& Container(bool init, std::size_t i) {
    return init ? state_.init[i] : state_.main[i];
  }
  const Json& Spec(bool init, std::size_t i) const;
  void Admit();
  void Advance();
  void StartContainer(bool init, std::size_t i);
  void StartBuiltin(bool init, std::size_t i, const ImagePlan& plan);
  // The image step (pod_worker_images.cc): the container's plan, or nullopt while it waits for
  // its image (pulling, backing off, refused: the waiting reason and the events are set).
  std::optional<ImagePlan> ResolveImage(bool init, std::size_t i, const Json& spec,
                                        const EnvList& env);
  std::optional<ImagePlan> MapPlan(bool init, std::size_t i, const ImageEntry& entry,
                                   const std::vector<std::string>& command,
                                   const std::vector<std::string>& args);
  std::optional<ImagePlan> StorePlan(bool init, std::size_t i, const image::ImageRecord& record,
                                     const api::ImageReference& ref,
                                     const std::vector<std::string>& command,
                                     const std::vector<std::string>& args);
  void StartPull(bool init, std::size_t i, const api::ImageReference& ref);
  void OnPulled(bool init, std::size_t i, const PullOutcome& outcome);
  void WaitImage(bool init, std::size_t i, const std::string& reason, const std::string& message);
  void RetryImageAfter(bool init, std::size_t i, Duration d);
  Duration ScaledImageRetry() const;
  image::Keyring PullKeyring();
  process::ProcessSpec ProcessSpecOf(const Json& spec, const std::string& name,
                                     const ImagePlan& plan, EnvList env,
                                     std::vector<std::string> base, const std::string& log,
                                     const std::optional<ContainerMounts>& mounts);
  // Sets up every volume not set up yet; false (FailedMount event, once per message) while one
  // fails.
  bool SetUpVolumes();
  // The kube-api-access volume the ServiceAccount admission plugin would have added (set up
  // as kKubeApiAccess), when the pod gets one; false with the FailedMount message while its
  // ServiceAccount is missing.
  Result<bool> SetUpServiceAccountVolume(const ObjectLookup& objects);
  // A projected serviceAccountToken source's token (the kubelet's TokenRequest).
  Result<std::string> FetchToken(const Json& source);
  TokenFetcher Tokens();
  Json WithServiceAccountMount(const Json& container) const;
  // The container's filesystem under the sandbox (and the pod's /etc/hosts, rewritten).
  Result<ContainerMounts> MountsOf(const Json& spec, const std::string& field,
                                   const ContainerState& c, const ImagePlan& plan);
  std::string EtcHostsText();
  void AddHeadlessPods(const Json& svc, std::vector<HostsService>* out);
  // Binds the pod's resolv.conf at /etc/resolv.conf (a pod with a network of its own).
  Status AddResolvConf(ContainerMounts& mounts);
  // Reads the ConfigMaps, Secrets, PVCs of the pod's namespace and cluster-scoped objects.
  ObjectLookup Objects();
  void RetryConfigErrors();
  void Launch(bool init, std::size_t i, const process::ProcessSpec& ps);
  void PollService(bool init, std::size_t i);
  // Files this pod in ctx_.endpoint_waiters under the Service `host` names (when it exists).
  void WaitForEndpoint(const std::string& host);
  void OnExit(bool init, std::size_t i, const process::ProcessExit& exit);
  void Restart(bool init, std::size_t i);
  void BeginTermination();
  void MaybeFinishTermination();
  void FinishIfTerminal();
  void FinishEviction();
  void ReleaseResources();
  // The pause process whose PID namespace the pod's containers share (shareProcessNamespace),
  // started on first use: its pid, or 0 (the host's namespace) where there is none, with a
  // FailedCreatePodSandBox event when it cannot start.
  process::Pid SharedPidNamespace();
  void StopPause();
  void WriteStatus();
  void PublishLogs();
  // Replaces the pod as last seen (not null).
  void SetPod(std::shared_ptr<const Json> pod);
  // Parkable (warm_pods.h): the pod's tree to pack; then its packed bytes, kept instead.
  std::shared_ptr<const Json> ParkingTree() const override { return pod_; }
  void Parked(std::string packed) override;
  void Event(const std::string& type, const std::string& reason, const std::string& message);
  std::string LogPath(const std::string& container, int restart_count) const;
  // Resolves through ResolveTarget; within one container start, each (host, need_ready) once
  // (start_resolved_).
  std::optional<ServiceTarget> Resolve(const std::string& host, bool need_ready);
  std::optional<ServiceTarget> ResolveNow(const std::string& host, bool need_ready);
  std::optional<ServiceTarget> ResolveTarget(const std::string& service, const std::string& ns,
                                             const PodHost* pod_host, bool need_ready);
  // False while MASTER_ADDR or PET_MASTER_ADDR names a Service of the cluster (any name
  // ParseServiceHost takes, whoever owns the pod) that does not resolve yet: no Service of that
  // name, or none of its pods has an IP; with cluster DNS, also while its records do not name it
  // (ClusterNetwork::DnsResolves: `<hostname>.<subdomain>` names too).
  bool MasterAddressReady(const EnvList& env);
  std::vector<std::string> KubeletEnv(const Json& container, EnvList& env);
  bool AnyRunning() const;
  template <typename Fn>
  EventLoop::TimerId After(Duration d, Fn fn);

  WorkerContext& ctx_;
  // The pod as last seen: the informer's snapshot, or between a status write and the watch
  // event that brings the same version, the write's answer (Client::UpdateShared: in process the
  // store's snapshot itself, the one the event brings).
  // Null while parked: then parked_ holds it packed (pod() unparks).
  mutable std::shared_ptr<const Json> pod_;
  mutable std::string parked_;
  std::string rv_;  // the pod's metadata.resourceVersion
  // The resourceVersions of this worker's last status writes, oldest first: their watch events
  // bring nothing new (Update skips them). Writes arrive in order, so a few suffice.
  static constexpr std::size_t kOwnVersions = 4;
  std::vector<std::string> own_rvs_;
  std::string uid_, ns_, name_;
  PodState state_;
  bool admitted_ = false;
  bool terminating_ = false;
  bool deleted_ = false;
  bool delete_sent_ = false;
  bool evicting_ = false;
  std::string eviction_message_;
  EventLoop::TimerId kill_timer_ = 0;
  std::vector<int> gpus_;    // the GpuSlots units this pod holds
  std::string netns_path_;  // the pod's network namespace ("" = the host's network)
  // While StartContainer runs: the names it resolved, by (host, need_ready). The start sees the
  // cluster at one instant, and MASTER_ADDR's wait and the env's rewrite ask for the same names
  // several times.
  using ResolvedNames = std::map<std::pair<std::string, bool>, std::optional<ServiceTarget>>;
  ResolvedNames* start_resolved_ = nullptr;
  process::Pid pause_pid_ = 0;  // the shared PID namespace's init (0: none running)
  PodVolumeDirs dirs_;
  std::map<std::string, PodVolume> volumes_;  // set up, by name
  bool volumes_ready_ = false;
  std::string mount_error_;  // the last FailedMount message (one event per distinct message)
  EventLoop::TimerId mount_timer_ = 0;  // the next try of a failed mount
};

template <typename Fn>
inline EventLoop::TimerId PodWorker::After(Duration d, Fn fn) {
  std::weak_ptr<PodWorker> self = weak_from_this();
  return ctx_.loop.PostAfter(d, [self, fn] {
    if (auto w = self.lock()) fn(*w);
  });
}

}  // namespace pjemu::kubelet
