// RealTimeCluster: the embedded cluster for real-time scenario runs. The same components as
// Cluster (Store with the PyTorchJob admission, Controller, Scheduler, one Kubelet over a
// TrainerRunner over a PosixProcessRunner: real processes, the real trainer) on a RealClock,
// but with no thread of its own and no API server: the caller drives loop() (Step), as with
// VirtualCluster, so a scenario's injector and observer share the actors' thread. (Cluster runs
// its loop on a thread for the CLI and serves HTTP; this is the scenario variant of it.)
// Thread safety: the caller's thread only (the runner reports exits through the loop).
#pragma once

#include <memory>
#include <string>

#include "emulator/cluster/scenario_cluster.h"

namespace pjemu::cluster {

struct RealTimeClusterOptions {
  std::uint64_t seed = 1;
  std::string node_name = "pjemu-node";
  int gpus = 0;
  std::string image_map = "fixtures/images.yaml";
  double backoff_scale = 1.0;
  std::string trainer_path = "pjemu-trainer";  // ${PJEMU_TRAINER}
  std::string dataset_dir;                     // the trainer's --data-dir ("" = its default)
  std::string state_dir;  // pod logs and trainer work dirs; "" = a temporary one, removed
  ClientWrapper wrap_client;
  RunnerWrapper wrap_runner;
};

class RealTimeCluster final : public ScenarioCluster {
 public:
  explicit RealTimeCluster(RealTimeClusterOptions options);
  ~RealTimeCluster() override;  // Stop()
  RealTimeCluster(const RealTimeCluster&) = delete;
  RealTimeCluster& operator=(const RealTimeCluster&) = delete;

  Status Start() override;
  // Stops the actors, SIGKILLs every process group and waits (up to 10 s) until each exit was
  // reported. Idempotent.
  void Stop() override;
  bool real_time() const override { return true; }
  void Step(Duration d) override;
  Status RestartController() override;
  Status SetNodePower(const std::string& node, bool up) override;
  Status EvictPod(const std::string& ns, const std::string& name,
                  const std::string& message) override;
  void SetPullDelay(const std::string& glob, Duration delay) override;
  std::string MetricsPath(const Json& pod) const override;
  client::Client& client() override;
  EventLoop& loop() override;
  api::PodLogs& logs() override;
  const std::string& state_dir() const { return state_dir_; }

 private:
  class Parts;
  RealTimeClusterOptions options_;
  std::unique_ptr<Parts> parts_;
  std::string state_dir_;
  bool temp_state_dir_ = false;
};

}  // namespace pjemu::cluster
