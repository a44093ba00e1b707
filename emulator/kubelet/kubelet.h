// Kubelet: one emulated node. It registers its Node object and heartbeats it, follows the pods
// bound to it (spec.nodeName) through a client::Informer (which re-watches, relists and retries
// on its own, so the node never goes deaf), runs their init containers in order and then their
// containers as local processes through a process::ProcessRunner, and writes pod status back
// through the Client the way the real kubelet does (phases, conditions, containerStatuses,
// restarts with CrashLoopBackOff, OOMKilled, graceful deletion). It also answers api::PodLogs
// from the CRI log files it writes under
// root_dir/pods/<ns>_<pod>_<uid>/<container>/<restartCount>.log. It sets up the pods' volumes
// (volumes.h) and, with the sandbox, gives each container its own filesystem (pod_mounts.h);
// informers on ConfigMaps and Secrets wake the pods that wait for them or show them in volumes.
// Thread safety: the constructor, Start and Stop run on the EventLoop thread (or before it
// runs); everything else happens on the EventLoop thread, except Find and Exec, which are safe
// from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/api/exec.h"
#include "emulator/api/logs.h"
#include "emulator/api/service_account.h"
#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/event_loop.h"
#include "emulator/image/image_service.h"
#include "emulator/kubelet/image_map.h"
#include "emulator/kubelet/image_puller.h"
#include "emulator/kubelet/pod_network.h"
#include "emulator/process/container_exec.h"
#include "emulator/process/process_runner.h"

namespace pjemu::kubelet {

struct KubeletOptions {
  std::string node_name = "pjemu-node";
  // Host IP 127.0.0.<node_index + 1>; also keeps node names and GPUs of several kubelets apart.
  int node_index = 0;
  // Where pod directories and CRI log files live.
  std::string root_dir = "/tmp/pjemu-kubelet";
  // The built-in image map, always loaded, and the user's (`--image-map`, "" = none) layered
  // over it (ImageMap::LoadLayered: the user's entries win); relative paths are taken from the
  // working directory.
  std::string image_map_path = "fixtures/images.yaml";
  std::string user_image_map_path;
  // ${NAME} values for image map rewrites: PJEMU_TRAINER (the pjemu-trainer binary), PJEMU_BIN.
  std::map<std::string, std::string> image_vars;
  // Node capacity; "" / nullopt = detected from the host (cpu count, MemTotal, NVIDIA GPUs).
  std::string cpu;
  std::string memory;
  std::optional<int> gpus;
  // Time-slicing as the NVIDIA device plugin configures it: each GPU is advertised this many
  // times (nvidia.com/gpu = GPUs x gpu_sharing, node labels nvidia.com/gpu.replicas and
  // nvidia.com/gpu.sharing-strategy), and pods sharing a GPU all see its index. 1: no sharing.
  int gpu_sharing = 1;
  int max_pods = 110;
  // How many pods stay JSON trees between the times they are read (warm_pods.h); the others are
  // kept packed, so that a node's thousands of pods cost their bytes at rest, not their trees.
  std::size_t warm_pods = 512;
  std::map<std::string, std::string> node_labels;
  // spec.taints of the Node at registration ({key, value, effect} objects).
  Json node_taints = Json::array();
  // The machine's GPUs this node owns, by index: its GPU i is the machine's gpu_indices[i]
  // (CUDA_VISIBLE_DEVICES, device nodes); overrides `gpus`. Empty = GPUs 0..gpus-1.
  std::vector<int> gpu_indices;
  // Multiplies CrashLoopBackOff's 10 s initial / 5 min cap (tests use e.g. 0.01).
  double backoff_scale = 1.0;
  // How often the Node's conditions are heartbeated.
  Duration node_status_interval = 10s;
  // Interval between the tries of the wait-for-service builtin (the script sleeps 2 s).
  Duration service_poll_interval = 1s;
  // Pod IPs and service host ports, shared by every kubelet of one cluster; nullptr = own one.
  std::shared_ptr<ClusterNetwork> network;
  // The image pull step (not owned; must outlive the kubelet); nullptr = the kubelet's own
  // ImageCache, which takes the image map's pull_delay once per image.
  ImagePuller* image_puller = nullptr;
  // The node's image store and registry pulls (not owned; must outlive the kubelet): an image
  // no map entry claims runs from it, pulled by the container's imagePullPolicy
  // (pod_worker_images.cc). nullptr = image maps only (an unmapped image is ErrImagePull).
  image::ImageService* image_service = nullptr;
  // Each container in a mount namespace of its own (pod_mounts.h: volumes at their mountPaths,
  // image files, private /tmp, the pod's /dev/shm and /etc/hosts). kAuto: when the runner runs
  // real processes and process::SandboxAvailable() (root); kOn: Start fails when the host
  // cannot; kOff: processes see the host's filesystem (volumes are still set up on the host).
  enum class Sandbox { kAuto, kOn, kOff };
  Sandbox sandbox = Sandbox::kAuto;
  // A network namespace per pod on the cluster's bridge (ClusterNetwork::EnableIsolation):
  // kAuto when the sandbox is on and the host can; kOff keeps the host's network (127.42.x.y
  // addresses and the env rewriting of pod_network.h).
  enum class PodNetwork { kAuto, kOff };
  PodNetwork pod_network = PodNetwork::kAuto;
  // How often emptyDir sizeLimits are checked (eviction) and failed mounts and env references
  // are retried, as the kubelet's housekeeping does.
  Duration housekeeping_interval = 10s;
  // How pods reach the API server (`serve`): every container gets the `kubernetes` Service's
  // env (KUBERNETES_SERVICE_HOST, ...) and, unless automountServiceAccountToken is false, the
  // kube-api-access volume at api::kServiceAccountMountPath (a token of the pod's
  // ServiceAccount, waited for until that exists; ca.crt from the kube-root-ca.crt ConfigMap;
  // the namespace); projected serviceAccountToken sources get real tokens. Shared, read-only;
  // nullptr = no API server (`run`): none of it, and projected tokens are placeholders.
  std::shared_ptr<const api::InClusterAccess> in_cluster;
};

class PodWorker;
class ImagePulls;
struct WorkerContext;

class Kubelet final : public api::PodLogs, public api::PodExec {
 public:
  Kubelet(client::Client& client, EventLoop& loop, process::ProcessRunner& runner,
          KubeletOptions options);
  ~Kubelet() override;  // Stop()
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  // Loads the image map, registers the Node and starts watching pods. kInvalid/kNotFound for a
  // bad image map (file:line in the message); the Client's errors for the Node registration and
  // the first List and Watch of pods.
  Status Start();
  // SIGKILLs every process of this node's pods, stops the watch and the heartbeat. Pod status
  // is left as it was (the node simply went away); the pods' memory-backed volumes
  // (/dev/shm/pjemu-<node>-<uid>) are removed, as a reboot would, the others kept. Idempotent.
  void Stop();

  Result<api::LogFile> Find(const api::LogRequest& request) override;
  // Runs a command in a running container of a pod on this node (process::StartInContainer:
  // its namespaces, environment and working directory). Safe from any thread.
  Result<std::unique_ptr<api::ExecProcess>> Exec(const api::ExecRequest& request) override;
  Status Check(const api::ExecRequest& request) override;
  // The pod's network namespace (a path to open and setns into) when it has one of its own,
  // for port-forward's dials; "" = the host's network. Safe from any thread.
  std::string NetworkNamespace(const std::string& ns, const std::string& pod) override;

  // Fault hooks (scenarios). The eviction manager evicts ns/name as under node pressure
  // (SIGKILL, phase Failed, reason Evicted, `message`; "" = a memory-pressure message);
  // kNotFound when no running pod of that name is on this node.
  Status EvictPod(const std::string& ns, const std::string& name, const std::string& message);

  const std::string& node_name() const { return options_.node_name; }
  const std::string& host_ip() const { return host_ip_; }
  // Pods with a worker on this node (running, terminating or finished but not deleted).
  std::size_t pod_count() const { return workers_.size(); }

 private:
  // What Exec runs: the container's process, environment, working directory and namespaces.
  Result<process::ContainerExecSpec> ExecSpec(const api::ExecRequest& request);
  // `snapshot` is the informer's pod, kept (not copied) by the pod's worker.
  void HandlePod(const std::string& type, const std::shared_ptr<const Json>& snapshot);
  // A Ready pod (of any node) wakes the wait-for-service builtins whose Service selects it.
  void WakeEndpointWaiters(const Json& pod);
  // A ConfigMap or Secret (plural) changed: the workers of its namespace retry what waited for
  // it and rewrite the volumes that show it.
  void HandleObject(const std::string& plural, const Json& object);
  void Heartbeat();
  void Housekeeping();
  Status RegisterNode();
  // The workers, by uid: the order every pass over all of them takes.
  std::vector<std::shared_ptr<PodWorker>> WorkersInOrder() const;

  client::Client& client_;
  EventLoop& loop_;
  process::ProcessRunner& runner_;
  KubeletOptions options_;
  std::string host_ip_;
  std::unique_ptr<WorkerContext> ctx_;
  std::unique_ptr<ImagePulls> pulls_;  // with options_.image_service
  client::Informer pods_;  // after options_: its handler runs HandlePod
  client::Informer configmaps_;
  client::Informer secrets_;
  Status network_status_ = Status::Ok();  // why pods have no network of their own, if so
  // By pod uid; hashed, as every pod event looks its worker up (passes sort: WorkersInOrder).
  std::unordered_map<std::string, std::shared_ptr<PodWorker>> workers_;
  std::shared_ptr<bool> alive_;
  EventLoop::TimerId heartbeat_ = 0;
  EventLoop::TimerId housekeeping_ = 0;
  bool started_ = false;
};

}  // namespace pjemu::kubelet
