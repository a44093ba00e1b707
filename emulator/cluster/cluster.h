// Cluster: the embedded Kubernetes cluster behind `pjemu run`, `pjemu serve`, scenarios,
// benchmarks and tests. It owns and wires every component in the flow: Clock, EventLoop, Store
// (persisted with data_dir), LocalClient, Controller, Scheduler, storage::VolumeController
// (volumes in <data_dir>/storage, else <state_dir>/kubelet/storage), one Kubelet over a
// ProcessRunner, and optionally the HTTP ApiServer with the web console. ClusterOptions picks
// the clock (real or virtual), the processes (real or simulated) and who runs the loop (a thread
// of its own, or the caller through Step/loop()). It only wires; logic lives in the components.
// The faults decorators wrap its seams from outside (ClusterOptions::wrap_client, wrap_runner,
// wrap_images); the node-level fault actions below act as the kubelet's eviction manager and a
// power switch would.
// Thread safety: Start/Stop from one thread. Loop on its own thread: client(), logs(),
// CheckImages and the fault actions are safe from any thread between Start and Stop (the fault
// actions run on the loop thread and wait). Loop driven by the caller: everything, Step and the
// fault actions included, from the caller's thread only.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/api/workload.h"
#include "emulator/client/client.h"
#include "emulator/cluster/cluster_options.h"
#include "emulator/common/event_loop.h"
#include "emulator/common/status.h"

namespace pjemu::cluster {

class Cluster {
 public:
  explicit Cluster(ClusterOptions options);
  ~Cluster();  // Stop()
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Validates the options, builds the components and starts them (and the API server when
  // options.api_server). kInvalid for bad options or a bad image map (kNotFound when missing);
  // kUnavailable when the API server cannot listen. On error nothing is left running.
  Status Start();
  // Stops everything, in reverse order: API server, controller, scheduler, kubelet (SIGKILLs
  // every process group it started and waits until each exit was reported, up to 10 s of real
  // or 1 min of virtual time), then the loop's thread; removes a temporary state directory.
  // Idempotent; also called by the destructor.
  void Stop();

  // Loop driven by the caller: runs the loop for d of cluster time (virtual: jumps from timer to
  // timer; real: waits on the wall clock). REQUIRES: Start() returned OK, options.loop kCaller.
  void Step(Duration d);

  // Fault actions, run on the loop. kInvalid before Start.
  // A fresh controller over the same store (it rebuilds its view from there, as after a crash).
  Status RestartController();
  // The node's power: off stops its kubelet at once (every container process SIGKILLed, no
  // status written, no heartbeat); on starts a fresh kubelet that registers the node again.
  // kNotFound for another node name; kInvalid with the API server (it reads the kubelet's logs).
  Status SetNodePower(const std::string& node, bool up);
  // The kubelet's eviction manager evicts a pod (see kubelet::Kubelet::EvictPod).
  Status EvictPod(const std::string& ns, const std::string& name, const std::string& message);

  // REQUIRES: Start() returned OK.
  client::Client& client();  // unwrapped, for submitting and inspecting
  // Unwrapped, reading as the actors do (store::Form::kInProcess: versions whose managedFields
  // are not computed yet come without them): for an observer that never reads them and should
  // not make the store compute them, such as a benchmark's count of finished jobs.
  client::Client& in_process_client();
  api::PodLogs& logs();      // the current kubelet's (a power cycle replaces it)
  Clock& clock();
  EventLoop& loop();
  // Checks that every container image of a job (of a kind with a workload table) maps to something runnable under the
  // image map, the way the kubelet will resolve it: kInvalid (InvalidImageName) or kNotFound
  // (ErrImagePull) naming the replica and container, with how to map the image; details
  // {"field": "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image"}.
  Status CheckImages(const api::ResourceType& type, const Json& job) const;
  // The trainer's metrics file of a pod (rank 0's for the master), "" when the pod does not run
  // a mapped trainer (always "" with simulated processes).
  std::string MetricsPath(const Json& pod) const;
  // The port the API server listens on (0 without one) and the kubeconfig text that reaches it.
  int api_port() const;
  std::string Kubeconfig() const;
  // Where pod logs and trainer output live (options.state_dir or the temporary directory).
  const std::string& state_dir() const;
  const ClusterOptions& options() const { return options_; }

 private:
  class Parts;
  Status PrepareStateDir();
  std::filesystem::path TempBase() const;
  void RemoveTempStateDir();
  Status StartActors();
  Status StartApiServer();
  void MakeNamespaceController();
  void WaitForExits();
  Status CheckContainerImage(const api::PodTemplateRef& t, const char* field, std::size_t i,
                             const Json& container) const;

  ClusterOptions options_;
  std::unique_ptr<Parts> parts_;
  std::string state_dir_;
  bool temp_state_dir_ = false;
};

}  // namespace pjemu::cluster
