// The scheduler's pure decisions, kube-scheduler style: which nodes a pod fits, filter by filter
// in the default profile's order, the first failing one deciding a node's reason
// (NodeUnschedulable, TaintToleration: NoSchedule and NoExecute taints, the not-ready taint of a
// node that is not Ready; NodeAffinity: nodeSelector and required node affinity;
// NodeResourcesFit: every insufficient resource; VolumeBinding; PodTopologySpread and
// InterPodAffinity's required anti-affinity, both over any topologyKey of the nodes' labels),
// which one it goes to (the weighted scores of TaintToleration's PreferNoSchedule count x3,
// preferred node affinity x2, LeastAllocated x1, then name), and the FailedScheduling message
// `0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available:
// 1 No preemption victims found for incoming pod.` (DefaultPreemption's text: pjemu has no
// priorities to preempt by, so no node ever has a victim); with the VolumeBinding plugin's
// view of the pod's PersistentVolumeClaims (ClaimView): a missing, deleting or unbound Immediate
// claim keeps the pod off every node (PreFilter), a bound volume's node affinity off the others.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/pod_resources.h"
#include "emulator/api/taints.h"
#include "emulator/common/status.h"

namespace pjemu::scheduler {

struct NodeView {
  std::string name;
  std::map<std::string, std::string> labels;
  api::ResourceList allocatable;  // cpu in millicores; "pods" is the pod count
  api::ResourceList used;         // requests of the non-terminal pods bound to it, and "pods"
  bool ready = false;
  bool unschedulable = false;
  std::vector<api::Taint> taints;  // spec.taints
  // The non-terminal pods bound to it (and those the current pass placed there), for
  // anti-affinity and topology spread; not owned. Filled through AddPod.
  std::vector<const Json*> pods;
  // Those of `pods` with required anti-affinity terms: what the anti-affinity filter checks
  // every incoming pod against (kube-scheduler keeps the same list per node), so a pass over
  // thousands of pods without any is not quadratic.
  std::vector<const Json*> anti_affinity_pods;

  // `anti_affinity`: the pod has required anti-affinity terms (HasRequiredAntiAffinity).
  void AddPod(const Json* pod, bool anti_affinity);
  void AddPod(const Json* pod) { AddPod(pod, HasRequiredAntiAffinity(*pod)); }
  static bool HasRequiredAntiAffinity(const Json& pod);
  // Whether the pod has terms that make placement look at other pods: required anti-affinity
  // or DoNotSchedule topology spread constraints (without any such pod, NodeView::pods is
  // never read).
  static bool HasPlacementTerms(const Json& pod);
};

// Builds a NodeView from a Node object (used left empty).
NodeView ViewOfNode(const Json& node);

// A PersistentVolumeClaim a pod's volumes name, as the VolumeBinding plugin sees it.
struct ClaimView {
  std::string name;
  bool found = false;
  bool deleting = false;
  bool bound = false;                     // spec.volumeName is set
  bool wait_for_first_consumer = false;   // unbound, and its class binds WaitForFirstConsumer
  std::string selected_node;              // its volume.kubernetes.io/selected-node annotation
  std::string class_error;                // unbound, and its class could not be read
  std::vector<std::string> volume_nodes;  // bound: the volume's hostname affinity; empty = any
};

// The claim names of a pod's persistentVolumeClaim volumes, in order, without repeats.
std::vector<std::string> PodClaimNames(const Json& pod);
// A claim (null when missing) with its class (null when missing or none) and, when bound, its
// volume (null when missing).
ClaimView ViewOfClaim(const std::string& name, const Json& claim, const Json& storage_class,
                      const Json& volume);
// VolumeBinding's PreFilter: why no node can take the pod (`persistentvolumeclaim "x" not
// found`, `pod has unbound immediate PersistentVolumeClaims`, ...), "" when nodes are to be
// tried. *error says the text is the whole message (an error, not a FitError).
std::string ClaimsPreFilter(const std::vector<ClaimView>& claims, bool* error);

// Why a pod does not fit a node: the kube-scheduler's per-node reasons ("Insufficient cpu",
// "Too many pods", "node(s) didn't match Pod's node affinity/selector", ...); empty = fits.
// `all` (every node, `node` among them) is what anti-affinity and topology spread count pods
// over; without it those two filters pass.
std::vector<std::string> UnfitReasons(const Json& pod, const api::ResourceList& requests,
                                      const NodeView& node,
                                      const std::vector<ClaimView>& claims = {},
                                      const std::vector<NodeView>* all = nullptr);
// True when the reason is UnschedulableAndUnresolvable (preemption cannot help: taints,
// affinity, cordon, volume conflicts), false for what evicting pods could free (resources,
// anti-affinity, spread).
bool Unresolvable(const std::string& reason);
// The FitError text of kube-scheduler: `0/<n> nodes are available: <count> <reason>, ...` with
// the entries sorted as strings, and DefaultPreemption's `preemption: ...` after it.
std::string FitErrorMessage(std::size_t nodes, const std::map<std::string, int>& reason_counts,
                            int unresolvable_nodes);

// The placement filters of filters.cc, each "" when the node passes, else its reason.
std::string TaintFilter(const Json& pod, const NodeView& node);
std::string AntiAffinityFilter(const Json& pod, const NodeView& node,
                               const std::vector<NodeView>& all);
std::string TopologySpreadFilter(const Json& pod, const NodeView& node,
                                 const std::vector<NodeView>& all);


// The chosen node among the fitting ones (least allocated cpu+memory share, then name), or
// nullopt with *message set to the FailedScheduling message.
std::optional<std::size_t> ChooseNode(const Json& pod, const api::ResourceList& requests,
                                      const std::vector<NodeView>& nodes, std::string* message,
                                      const std::vector<ClaimView>& claims = {});

}  // namespace pjemu::scheduler
