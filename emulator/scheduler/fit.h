// The scheduler's pure decisions, kube-scheduler style: which nodes a pod fits (NodeResourcesFit,
// NodeName, NodeSelector, NodeUnschedulable, the not-ready taint), which one it goes to
// (least allocated, then name), and the FailedScheduling message
// `0/1 nodes are available: 1 Insufficient nvidia.com/gpu.`.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/pod_resources.h"
#include "emulator/common/status.h"

namespace pjemu::scheduler {

struct NodeView {
  std::string name;
  std::map<std::string, std::string> labels;
  api::ResourceList allocatable;  // cpu in millicores; "pods" is the pod count
  api::ResourceList used;         // requests of the non-terminal pods bound to it, and "pods"
  bool ready = false;
  bool unschedulable = false;
};

// Builds a NodeView from a Node object (used left empty).
NodeView ViewOfNode(const Json& node);

// Why a pod does not fit a node: the kube-scheduler's per-node reasons ("Insufficient cpu",
// "Too many pods", "node(s) didn't match Pod's node affinity/selector", ...); empty = fits.
std::vector<std::string> UnfitReasons(const Json& pod, const api::ResourceList& requests,
                                      const NodeView& node);

// The chosen node among the fitting ones (least allocated cpu+memory share, then name), or
// nullopt with *message set to the FailedScheduling message.
std::optional<std::size_t> ChooseNode(const Json& pod, const api::ResourceList& requests,
                                      const std::vector<NodeView>& nodes, std::string* message);

}  // namespace pjemu::scheduler
