// NodeLifecycle: what the control plane does to a node that stopped heartbeating and to its
// pods, acted out through the API for the node-down fault (kube-controller-manager's node
// lifecycle controller, its NoExecute taint manager and the pod garbage collector; pjemu has
// none of them running on their own). The steps, with upstream's reasons and messages:
//  1. after `grace` (--node-monitor-grace-period, 40 s): every node condition turns Unknown
//     (reason NodeStatusUnknown, "Kubelet stopped posting node status."), the node gets the
//     node.kubernetes.io/unreachable NoSchedule and NoExecute taints, a NodeNotReady event, and
//     each pod on it Ready=False (MarkPodsNotReady).
//  2. after `eviction` more (the default tolerationSeconds of the unreachable taint, 300 s):
//     the taint manager marks each pod (DisruptionTarget True, DeletionByTaintManager, event
//     TaintManagerEviction) and deletes it. No kubelet will confirm that deletion, so the pod
//     would stay Terminating; pjemu then does what the pod GC does once the node is marked
//     out of service (node.kubernetes.io/out-of-service): phase Failed and a forced deletion.
//     (A real cluster without that taint keeps the pods Terminating until the node returns.)
// Thread safety: pure functions over a Client (EventLoop thread in the injector).
#pragma once

#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/clock.h"

namespace pjemu::faults {

struct NodeLifecycleTiming {
  Duration grace = 40s;      // heartbeat silence before the node is NotReady (Unknown)
  Duration eviction = 300s;  // then, until its pods are evicted (0 = never)
};

// Step 1. Returns the names "ns/name" of the pods marked not ready.
Result<std::vector<std::string>> MarkNodeUnreachable(client::Client& client,
                                                     const std::string& node, Time now);
// Step 2 for every pod still bound to the node and not finished. Returns "ns/name" of each.
Result<std::vector<std::string>> EvictPodsOfLostNode(client::Client& client,
                                                     const std::string& node, Time now);

}  // namespace pjemu::faults
