// Fault actions that VirtualCluster and RealTimeCluster share. Both keep their actors in a Parts
// struct with the same members (loop, controller, kubelet, kubelet_options, node_up, actors(),
// runner()); these templates act on either.
// Start/stop order and fault actions stay the same in both clocks. Call them on the cluster's loop thread.
#pragma once

#include <memory>
#include <string>

#include "emulator/common/status.h"
#include "emulator/controller/controller.h"
#include "emulator/kubelet/kubelet.h"
#include "emulator/scheduler/scheduler.h"

namespace pjemu::cluster {

// Creates the controller, scheduler and kubelet (with p->kubelet_options) and starts them, the
// kubelet first so that the node exists before anything is scheduled.
template <class Parts>
Status CreateAndStartActorsIn(Parts* p) {
  p->controller = std::make_unique<controller::Controller>(p->actors(), p->loop);
  p->scheduler = std::make_unique<scheduler::Scheduler>(p->actors(), p->loop);
  p->kubelet =
      std::make_unique<kubelet::Kubelet>(p->actors(), p->loop, p->runner(), p->kubelet_options);
  Status started = p->kubelet->Start();
  if (started.ok()) started = p->scheduler->Start();
  if (started.ok()) started = p->controller->Start();
  return started;
}

// Stops the actors in the reverse order and kills every container process.
template <class Parts>
void StopActorsIn(Parts* p) {
  p->controller->Stop();
  p->scheduler->Stop();
  p->kubelet->Stop();
  p->runner().KillAll();
}

// A fresh controller over the same store: it rebuilds its view from a list, as after a crash.
template <class Parts>
Status RestartControllerIn(Parts* p) {
  if (p == nullptr) return Status(Code::kInvalid, "cluster not started");
  p->controller->Stop();
  p->controller = std::make_unique<controller::Controller>(p->actors(), p->loop);
  return p->controller->Start();
}

// Down: the kubelet stops (its processes die with it). Up: a fresh kubelet registers the node.
template <class Parts>
Status SetNodePowerIn(Parts* p, const std::string& node, bool up) {
  if (p == nullptr) return Status(Code::kInvalid, "cluster not started");
  if (node != p->kubelet_options.node_name) return NotFoundError("nodes", node);
  if (up == p->node_up) return Status::Ok();
  p->node_up = up;
  if (!up) {
    p->kubelet->Stop();
    return Status::Ok();
  }
  p->kubelet =
      std::make_unique<kubelet::Kubelet>(p->actors(), p->loop, p->runner(), p->kubelet_options);
  return p->kubelet->Start();
}

template <class Parts>
Status EvictPodIn(Parts* p, const std::string& ns, const std::string& name,
                  const std::string& message) {
  if (p == nullptr) return Status(Code::kInvalid, "cluster not started");
  return p->kubelet->EvictPod(ns, name, message);
}

}  // namespace pjemu::cluster
