// VirtualCluster: the embedded cluster for virtual-time runs (scenarios, fast tests). Same
// components as Cluster (Store with the PyTorchJob admission, Controller, Scheduler, one
// Kubelet) but on a FakeClock and a SimulatedProcessRunner, driven by the caller through loop()
// on the caller's thread: minutes of cluster time in milliseconds, the same run every time.
// Hooks let a fault layer wrap the actors' Client and the kubelet's ProcessRunner without this
// file knowing about faults; the controller can be restarted mid-run (it rebuilds its view).
// Thread safety: single-threaded; everything runs on the caller's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/client/client.h"
#include "emulator/cluster/scenario_cluster.h"
#include "emulator/common/event_loop.h"
#include "emulator/process/simulated_process_runner.h"

namespace pjemu::cluster {

struct VirtualClusterOptions {
  std::uint64_t seed = 1;  // uids and generateName suffixes
  std::string node_name = "pjemu-node";
  int gpus = 0;
  std::string cpu = "8";
  std::string memory = "32Gi";
  int max_pods = 110;  // the node's pod capacity (kubelet --max-pods)
  std::string image_map = "fixtures/images.yaml";
  double backoff_scale = 1.0;  // CrashLoopBackOff scaling (1.0 = 10 s doubling to 5 min)
  std::string root_dir;        // kubelet pod directories and logs; "" = a temporary directory
  process::SimulationScript script = process::DefaultScript;
  // Wraps the Client that the controller, scheduler and kubelet use (the caller's client() is
  // never wrapped). The wrapper must forward to the Client it is given.
  std::function<std::unique_ptr<client::Client>(client::Client&)> wrap_client;
  // Wraps the kubelet's ProcessRunner.
  std::function<std::unique_ptr<process::ProcessRunner>(process::ProcessRunner&)> wrap_runner;
};

class VirtualCluster final : public ScenarioCluster {
 public:
  explicit VirtualCluster(VirtualClusterOptions options);
  ~VirtualCluster() override;  // Stop()
  VirtualCluster(const VirtualCluster&) = delete;
  VirtualCluster& operator=(const VirtualCluster&) = delete;

  // Builds and starts every component; kInvalid for a bad image map; nothing left on error.
  Status Start() override;
  // Stops the actors, kills what is still "running" and lets the loop report it. Idempotent.
  void Stop() override;
  // Stops the controller and starts a fresh one over the same store (state comes from there).
  Status RestartController() override;
  bool real_time() const override { return false; }
  void Step(Duration d) override { loop().RunFor(d); }
  Status SetNodePower(const std::string& node, bool up) override;
  Status EvictPod(const std::string& ns, const std::string& name,
                  const std::string& message) override;
  void SetPullDelay(const std::string& glob, Duration delay) override;
  std::string MetricsPath(const Json&) const override { return ""; }

  // REQUIRES: Start() returned OK.
  client::Client& client() override;  // unwrapped, for submitting and inspecting
  client::Client& actor_client();     // what the actors use (wrapped when wrap_client is set)
  process::ProcessRunner& runner();   // the kubelet's (wrapped when wrap_runner is set)
  api::PodLogs& logs() override;
  EventLoop& loop() override;
  FakeClock& clock();
  // Checks every container image of a job against the image map (see Cluster::CheckImages).
  Status CheckImage(const std::string& image) const;

 private:
  class Parts;
  VirtualClusterOptions options_;
  std::unique_ptr<Parts> parts_;
  std::string root_dir_;
  bool temp_root_ = false;
};

}  // namespace pjemu::cluster
