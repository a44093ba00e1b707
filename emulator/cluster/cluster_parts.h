// Cluster::Parts: every component of one Cluster, for the cluster's own files (cluster.cc
// wires and starts them, cluster_nodes.cc builds and powers the nodes). Private to
// emulator/cluster; nothing else includes it.
// Thread safety: as Cluster's (cluster.h).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <thread>
#include "emulator/api/json_fields.h"
#include "emulator/cluster/cluster.h"
#include "emulator/api/podgroup.h"
#include "emulator/apiserver/apiserver.h"
#include "emulator/apiserver/service_account_token.h"
#include "emulator/client/local_client.h"
#include "emulator/cluster/trainer_runner.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/image/image_service.h"
#include "emulator/kubelet/image_map.h"
#include "emulator/kubelet/image_puller.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/kinds/kinds.h"
#include "emulator/kueue/kueue_controller.h"
#include "emulator/kubelet/node_object.h"
#include "emulator/cluster/node_router.h"
#include "emulator/scheduler/taint_manager.h"
#include "emulator/namespaces/namespace_controller.h"
#include "emulator/network/cluster_services.h"
#include "emulator/persist/sqlite_durability.h"
#include "emulator/process/io_sampler.h"
#include "emulator/process/posix_process_runner.h"
#include "emulator/process/resource_sampler.h"
#include "emulator/process/sampled_usage.h"
#include "emulator/process/sandbox.h"
#include "emulator/process/simulated_process_runner.h"
#include "emulator/scheduler/scheduler.h"
#include "emulator/storage/volume_controller.h"
#include "emulator/store/store.h"
#include "emulator/tensorboard/tensorboard_controller.h"
#include "emulator/ui/console.h"

namespace pjemu::cluster {

// The built-in image map file: options.builtin_image_map, or the default one.
std::string BuiltinImageMapPath(const ClusterOptions& options);
// The clock of `kind`: RealClock or FakeClock.
std::unique_ptr<Clock> MakeClock(ClockKind kind);

// Every component, declared in construction order (destroyed in reverse).
class Cluster::Parts {
 public:
  Parts(const ClusterOptions& options, std::string state_dir)
      : options(options), state_dir(std::move(state_dir)), clock(MakeClock(options.clock)) {}

  const ClusterOptions& options;
  const std::string state_dir;
  std::unique_ptr<Clock> clock;
  EventLoop loop{*clock};
  std::unique_ptr<persist::SqliteDurability> durability;  // with data_dir; outlives the store
  std::unique_ptr<store::Store> store;
  std::unique_ptr<client::Client> local;           // as the API server serves: Cluster::client()
  std::unique_ptr<client::Client> in_process;      // the actors' (store::Form::kInProcess)
  std::unique_ptr<client::Client> wrapped_client;  // options.wrap_client over in_process
  std::unique_ptr<process::PosixProcessRunner> posix;   // real processes
  std::unique_ptr<process::ProcessRunner> base_runner;  // TrainerRunner or SimulatedProcessRunner
  std::unique_ptr<process::ProcessRunner> wrapped_runner;
  std::unique_ptr<process::ResourceSampler> sampler;  // the console's CPU/memory charts
  std::unique_ptr<process::IoSampler> io_sampler;     // its network and storage I/O charts
  std::unique_ptr<process::SampledUsage> usage;       // metrics.k8s.io's figures, from it
  std::vector<std::unique_ptr<controller::Controller>> controllers;  // one per job kind
  std::unique_ptr<kueue::KueueController> kueue;  // queues the kinds Kueue integrates
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<storage::VolumeController> volumes;  // local-path provisioner, PV binder
  std::unique_ptr<tensorboard::TensorBoardController> tensorboards;  // their log dirs, status
  std::unique_ptr<namespaces::NamespaceController> namespace_controller;  // default SA, root CA, lifecycle
  // With the API server: its service-account signing key, and how pods reach it (filled in
  // once it listens, before the actors start).
  std::unique_ptr<apiserver::ServiceAccountTokens> sa_tokens;
  std::shared_ptr<api::InClusterAccess> in_cluster;
  // The nodes' image store and pulls (options.image_store), and wrap_image_service's decorator.
  std::unique_ptr<image::ImageService> image_service;
  std::unique_ptr<image::ImageService> wrapped_image_service;
  // One per node (ResolveNodes), in order: its kubelet and what powers it on again.
  struct Node {
    kubelet::KubeletOptions options;
    std::unique_ptr<kubelet::ImageCache> image_cache;    // the kubelet's, with wrap_images
    std::unique_ptr<kubelet::ImagePuller> image_puller;  // wrap_images' decorator of it
    std::unique_ptr<kubelet::Kubelet> kubelet;
    bool up = true;
  };
  std::vector<Node> nodes;
  NodeRouter router;  // the API server's logs and exec, to the pod's kubelet
  std::unique_ptr<scheduler::TaintManager> taint_manager;  // NoExecute evictions
  // Cluster DNS and ClusterIP addresses on the kubelets' pod network (under isolation only).
  std::unique_ptr<network::ClusterServices> cluster_services;
  std::unique_ptr<apiserver::ApiServer> api;
  std::thread loop_thread;
  kubelet::ImageMap images;
  std::map<std::string, std::string> image_vars;

  // Loads the image map and builds every component; nothing runs yet.
  Status Build();
  client::Client& actors() { return wrapped_client ? *wrapped_client : *in_process; }
  process::ProcessRunner& runner() { return wrapped_runner ? *wrapped_runner : *base_runner; }
  // Node i's kubelet over its options, with an image cache of its own (wrapped by wrap_images).
  void NewKubelet(std::size_t i);
  // Hands the current kubelets to the router.
  void RouteNodes();
  // A fresh controller per job kind over actors().
  void NewControllers();
  // Runs fn on the loop (waiting for its result when the loop has a thread of its own).
  Status OnLoop(const std::function<Status()>& fn);
  // Stops the actors in the reverse order of their start and kills every container process.
  void StopActors();
  // Where the kubelet made a pod network: cluster DNS and ClusterIP addresses on it, wired to
  // the kubelet's ClusterNetwork; else nothing. One line on stderr for what is off, and why.
  void StartClusterServices();
  // Starts the I/O sampler over the real processes and hands its samples to the console.
  void AddIoSampler(ui::ConsoleOptions& co);

 private:
  Status LoadImages();
  Status OpenStore();
  void MakeRunner();
  // Every node's kubelet options (ResolveNodes over the machine's GPUs).
  void MakeNodes();
  storage::VolumeControllerOptions MakeVolumeOptions() const;
};

}  // namespace pjemu::cluster
