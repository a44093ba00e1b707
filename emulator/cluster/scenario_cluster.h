// ScenarioCluster: what a scenario run needs from an embedded cluster, whichever clock it runs
// on: VirtualCluster (FakeClock, simulated processes) and RealTimeCluster (real processes, the
// real trainer). Both run every component on an EventLoop driven by the caller's thread, so
// the scenario's fault injector and observer run beside the actors without locks. The node
// hooks act like the kubelet's eviction manager, a power switch and a slow registry.
// Thread safety: the caller's thread only, between Start and Stop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/client/client.h"
#include "emulator/common/event_loop.h"
#include "emulator/process/process_runner.h"

namespace pjemu::cluster {

// Wraps the Client the controller, scheduler and kubelet use; must forward to the one given.
using ClientWrapper = std::function<std::unique_ptr<client::Client>(client::Client&)>;
// Wraps the kubelet's ProcessRunner.
using RunnerWrapper =
    std::function<std::unique_ptr<process::ProcessRunner>(process::ProcessRunner&)>;

class ScenarioCluster {
 public:
  virtual ~ScenarioCluster() = default;
  virtual Status Start() = 0;
  virtual void Stop() = 0;
  virtual bool real_time() const = 0;
  virtual client::Client& client() = 0;  // unwrapped, for submitting and inspecting
  virtual EventLoop& loop() = 0;
  virtual api::PodLogs& logs() = 0;
  // Runs the loop for d of cluster time (virtual: jumps; real: waits on the wall clock).
  virtual void Step(Duration d) = 0;
  // A fresh controller over the same store (it rebuilds its view from there).
  virtual Status RestartController() = 0;
  // The node's power: off stops its kubelet at once (every container process SIGKILLed, no
  // status written, no heartbeat); on starts a fresh kubelet that registers the node again.
  virtual Status SetNodePower(const std::string& node, bool up) = 0;
  // The kubelet's eviction manager evicts a pod (see kubelet::Kubelet::EvictPod).
  virtual Status EvictPod(const std::string& ns, const std::string& name,
                          const std::string& message) = 0;
  // Image pulls matching glob take delay from now on (see kubelet::Kubelet::SetPullDelay).
  virtual void SetPullDelay(const std::string& glob, Duration delay) = 0;
  // The trainer's metrics file (rank 0's for the master) of a pod; "" when none.
  virtual std::string MetricsPath(const Json& pod) const = 0;
};

}  // namespace pjemu::cluster
