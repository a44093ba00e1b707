// Cluster: the embedded Kubernetes cluster behind `pjemu run` and `pjemu serve`. It owns and
// wires every component in the flow: Clock, EventLoop (run on a thread of its own in real time),
// Store (with the PyTorchJob admission), LocalClient, Controller, Scheduler, one Kubelet over a
// PosixProcessRunner, and optionally the HTTP ApiServer. It only wires; logic lives in them.
// Thread safety: Start/Stop from one thread (the CLI's main thread); client(), logs() and
// CheckImages are safe from any thread between Start and Stop.
#pragma once

#include <memory>
#include <string>

#include "emulator/api/logs.h"
#include "emulator/client/client.h"
#include "emulator/cluster/cluster_options.h"
#include "emulator/common/status.h"

namespace pjemu::cluster {

class Cluster {
 public:
  explicit Cluster(ClusterOptions options);
  ~Cluster();  // Stop()
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Validates the options, builds the components and starts them (and the API server when
  // options.api_server). kInvalid for bad options or a bad image map; kUnavailable when the
  // API server cannot listen. On error nothing is left running.
  Status Start();
  // Stops everything, in reverse order: API server, controller, scheduler, kubelet (SIGKILLs
  // every process group it started and waits until they are reaped), then the EventLoop thread.
  // Idempotent; also called by the destructor.
  void Stop();

  // REQUIRES: Start() returned OK.
  client::Client& client();
  api::PodLogs& logs();
  Clock& clock();
  // Checks that every container image of a PyTorchJob maps to something runnable under the
  // image map, the way the kubelet will resolve it: kInvalid (InvalidImageName) or kNotFound
  // (ErrImagePull) naming the replica and container, with how to map the image; details
  // {"field": "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image"}.
  Status CheckImages(const Json& job) const;
  // The trainer's metrics file of a pod (rank 0's for the master), "" when the pod does not run
  // a mapped trainer.
  std::string MetricsPath(const Json& pod) const;
  // The port the API server listens on (0 without one) and the kubeconfig text that reaches it.
  int api_port() const;
  std::string Kubeconfig() const;
  // Where pod logs and trainer output live (options.state_dir or the temporary directory).
  const std::string& state_dir() const;
  const ClusterOptions& options() const { return options_; }

 private:
  class Parts;
  ClusterOptions options_;
  std::unique_ptr<Parts> parts_;
  std::string state_dir_;
  bool temp_state_dir_ = false;
};

}  // namespace pjemu::cluster
