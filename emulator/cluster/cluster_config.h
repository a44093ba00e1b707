// The cluster config file (`--config FILE` on run, serve and scenario): kind's `Cluster` shape
// (apiVersion kind.x-k8s.io/v1alpha4, `nodes:` with role and labels), with pjemu's per-node
// fields added beside kind's:
//   kind: Cluster
//   apiVersion: kind.x-k8s.io/v1alpha4
//   name: pjemu                     # default kind; nodes default to <name>-<role>, <name>-<role>2
//   nodes:
//   - role: worker                  # control-plane (kind's default) or worker
//     name: gpu-a                   # pjemu: the node's name
//     labels: {nvidia.com/gpu.product: H200}
//     taints: [{key: nvidia.com/gpu, effect: NoSchedule}]       # pjemu
//     capacity: {cpu: "8", memory: 32Gi, pods: 110}             # pjemu; default: the host's
//     gpus: 1                       # pjemu: a count, or the machine's GPUs by index: [0, 1]
// As kind does, control-plane nodes are labelled node-role.kubernetes.io/control-plane and,
// when the cluster has more than one node, tainted with it (NoSchedule). kind's other fields
// (networking, extraMounts, image, ...) are accepted and ignored.
// Errors are kInvalid "file:line: nodes[1].taints[0].effect: <problem>".
// Thread safety: free functions.
#pragma once

#include <string>
#include <vector>

#include "emulator/cluster/cluster_options.h"
#include "emulator/common/status.h"

namespace pjemu::cluster {

// Reads a config file into its nodes (kNotFound for a missing file).
Result<std::vector<NodeConfig>> LoadClusterConfig(const std::string& path);
// The same for text already read; `source` names it in errors.
Result<std::vector<NodeConfig>> ParseClusterConfig(const std::string& text,
                                                   const std::string& source);

}  // namespace pjemu::cluster
