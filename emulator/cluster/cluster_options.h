// ClusterOptions: everything that shapes an embedded cluster, set by the CLI's flags
// (`run`, `serve`), the scenario runner, benchmarks or tests, and checked by Validate() before
// anything starts. Defaults are the in-class initialisers (those of `pjemu run`); every CLI flag
// names the field it sets. Three choices shape the cluster, and each combination Validate
// accepts is one supported wiring:
//  - clock:     real (RealClock) or virtual (FakeClock: minutes of cluster time in milliseconds,
//               the same run every time for a seed);
//  - processes: real (a PosixProcessRunner behind a TrainerRunner: local programs, the real
//               trainer) or simulated (a SimulatedProcessRunner following `script`);
//  - loop:      on a thread of its own (`run`, `serve`) or driven by the caller (Cluster::Step,
//               Cluster::loop(): scenarios, tests, benchmarks), so that a caller's fault injector
//               and observer share the actors' thread.
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/process/process_runner.h"
#include "emulator/process/simulated_process_runner.h"

namespace pjemu::kubelet {
class ImagePuller;
}  // namespace pjemu::kubelet
namespace pjemu::image {
class ImageService;
}  // namespace pjemu::image

namespace pjemu::cluster {

enum class ClockKind { kReal, kVirtual };
enum class ProcessKind { kReal, kSimulated };
enum class LoopKind { kOwnThread, kCaller };

// Seams a caller (the faults decorators) wraps from outside. Each wrapper must forward to the
// object it is given, which outlives what it returns.
// The Client the controller, scheduler and kubelet use (Cluster::client() is never wrapped).
using ClientWrapper = std::function<std::unique_ptr<client::Client>(client::Client&)>;
// The kubelet's ProcessRunner.
using RunnerWrapper =
    std::function<std::unique_ptr<process::ProcessRunner>(process::ProcessRunner&)>;
// A kubelet's image pull step; called once for each kubelet the cluster creates (at Start and
// whenever the node powers on again), with that kubelet's own image cache.
using ImagePullerWrapper =
    std::function<std::unique_ptr<kubelet::ImagePuller>(kubelet::ImagePuller&)>;
// The image service behind every kubelet (the image store and registry pulls).
using ImageServiceWrapper =
    std::function<std::unique_ptr<image::ImageService>(image::ImageService&)>;

// One node of the cluster (a kind config's `nodes[]` entry, or one of `--nodes N`): its own
// kubelet, Node object, host IP (127.0.0.<i+1>) and pod CIDR (10.244.<i+1>.0/24).
struct NodeConfig {
  std::string name;
  std::string role = "worker";  // kind's role: control-plane or worker (label node-role...)
  std::map<std::string, std::string> labels;
  Json taints = Json::array();  // spec.taints at registration ({key, value, effect})
  std::string cpu;              // "" = the cluster's (ClusterOptions::cpu, else detected)
  std::string memory;           // "" = the cluster's
  int max_pods = 0;             // 0 = the cluster's max_pods
  // GPUs: the machine's GPUs it owns by index (gpu_indices), or a count (gpus) taken from the
  // machine's GPUs not owned by an earlier node while there are any, pretend GPUs beyond;
  // -1 (and no indices) = none for a node of a config, ClusterOptions::gpus for `--nodes`.
  int gpus = -1;
  std::vector<int> gpu_indices;
};

struct ClusterOptions {
  ClockKind clock = ClockKind::kReal;
  ProcessKind processes = ProcessKind::kReal;
  LoopKind loop = LoopKind::kOwnThread;
  // What each simulated process does (processes: simulated).
  process::SimulationScript script = process::DefaultScript;

  // The nodes (`--config FILE`, cluster_config.h); empty = `node_count` nodes built from the
  // fields below: node_name, then node_name2, node_name3, ... (`--nodes N`, default one).
  std::vector<NodeConfig> nodes;
  int node_count = 1;
  // Node: its name and GPU count (`--gpus`, per node); -1 detects GPUs (nvidia-smi,
  // /proc/driver/nvidia), shared out among `--nodes` in order.
  std::string node_name = "pjemu-node";
  int gpus = -1;
  // The Training Operator's `--gang-scheduler-name` (`volcano`, or scheduler-plugins' scheduler
  // name such as `scheduler-plugins`): the PyTorchJob controller makes each job's PodGroup and
  // gives its pods that schedulerName; the scheduler serves it, binding each gang all or
  // nothing. "" (or "None") = no gang scheduling.
  std::string gang_scheduler_name;
  // GPU sharing as the NVIDIA device plugin's time-slicing (`--gpu-sharing N`): each GPU is
  // advertised N times (nvidia.com/gpu = GPUs x N, labels nvidia.com/gpu.replicas=N and
  // nvidia.com/gpu.sharing-strategy=time-slicing); the pods on one GPU all see its index.
  int gpu_sharing = 1;
  // Node capacity; "" = detected from the host (cpu count, MemTotal).
  std::string cpu;
  std::string memory;
  int max_pods = 110;  // the node's pod capacity (kubelet --max-pods)
  // The user's image map (`--image-map`, "" = none), layered over the built-in one
  // (builtin_image_map, "" = fixtures/images.yaml): its entries win, the built-in ones still
  // map the operator's init image and the common base images.
  std::string image_map;
  std::string builtin_image_map;
  // The node's image store (`--image-store DIR`; the CLI's default is
  // image::ImageStore::DefaultRoot(), shared by every cluster of the user): an image no map
  // entry claims runs from it, pulled by imagePullPolicy from its registry (registries limited
  // by PJEMU_ALLOW_REGISTRIES, plain HTTP for PJEMU_INSECURE_REGISTRIES and loopback). "" = no
  // store: image maps only, an unmapped image is ErrImagePull.
  std::string image_store;
  std::int64_t image_store_max_bytes = 0;  // `--image-store-max`: the store's size cap (0 = none)
  // Each container in a filesystem of its own (`--sandbox`, kubelet.h): auto = when the host
  // allows (root) and processes are real; on = Start fails when it cannot; off = the host's.
  kubelet::KubeletOptions::Sandbox sandbox = kubelet::KubeletOptions::Sandbox::kAuto;
  // The trainer program behind ${PJEMU_TRAINER} in the image map; "" = "pjemu-trainer" on PATH.
  std::string trainer_path;
  // FashionMNIST directory handed to mapped trainer images (`--dataset-dir`; the trainer's
  // --data-dir); "" = the trainer's own default (/usr/share/datasets/fashion-mnist).
  std::string dataset_dir;
  // Where pod logs and the trainer's metrics land (`--output-dir`); "" = a fresh temporary
  // directory, removed by Stop() unless keep_state_dir ($TMPDIR, else for simulated processes
  // /dev/shm when present, else the system's temporary directory).
  std::string state_dir;
  bool keep_state_dir = false;
  // Persisted state (`--data-dir`): the store in <data_dir>/pjemu.db (SQLite, every acknowledged
  // write durable), provisioned PersistentVolumes' directories in <data_dir>/storage and, unless
  // state_dir is set, pod logs and trainer output in <data_dir>/state; a restart resumes from it.
  // "" = everything in memory (volumes under <state_dir>/kubelet/storage).
  std::string data_dir;
  // CrashLoopBackOff scaling (1.0 = the kubelet's 10 s doubling to 5 min).
  double backoff_scale = 1.0;
  // API server (`serve`) with the web console at /ui/: off for `run`.
  bool api_server = false;
  std::string address = "127.0.0.1";  // `--address`
  int port = 6443;                    // `--port`; 0 picks a free one
  std::string token;                  // `--token`; "" = no authentication
  // `--insecure-http`: plain HTTP instead of HTTPS. By default the API server speaks HTTPS with
  // a certificate signed by a CA made at the first start (kept in <data_dir>/pki with
  // --data-dir), and the kubeconfig carries the CA.
  bool insecure_http = false;
  // `--min-request-timeout`: the API server ends a watch without timeoutSeconds after this
  // many seconds times a random factor in [1, 2), as kube-apiserver does (its default: 1800).
  int min_request_timeout_seconds = 1800;
  std::uint64_t seed = 1;  // uids, generateName suffixes

  ClientWrapper wrap_client;
  RunnerWrapper wrap_runner;
  ImagePullerWrapper wrap_images;
  // The node's image service (the store and its registry pulls), for registry faults.
  ImageServiceWrapper wrap_image_service;

  // kInvalid naming the offending field (gpus < -1, port out of range, token without API
  // server or with insecure_http, empty node name, non-positive backoff scale or max_pods, a
  // virtual clock with real processes or a loop on its own thread).
  Status Validate() const;
};

// The nodes the cluster runs: options.nodes, else node_count nodes from the single-node fields,
// with each node's GPUs resolved against `machine_gpus` (the host's count): gpu_indices set for
// the machine's GPUs a node owns, gpus left as the count of pretend ones otherwise; cpu, memory
// and max_pods filled from the cluster's where a node leaves them.
std::vector<NodeConfig> ResolveNodes(const ClusterOptions& options, int machine_gpus);

}  // namespace pjemu::cluster
