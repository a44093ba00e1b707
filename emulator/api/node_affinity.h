// Node selection by labels (core/v1): a pod's spec.nodeSelector and
// spec.affinity.nodeAffinity, matched against a node's labels and name as the scheduler's
// NodeAffinity plugin matches them: nodeSelector and the required terms must both match;
// required terms are ORed, the expressions of a term ANDed (In, NotIn, Exists, DoesNotExist,
// Gt, Lt; matchFields on metadata.name); preferred terms add their weight when they match.
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

using NodeLabels = std::map<std::string, std::string>;

// One NodeSelectorTerm ({matchExpressions, matchFields}) against a node.
bool MatchesNodeSelectorTerm(const Json& term, const NodeLabels& labels,
                             const std::string& node_name);
// nodeSelector and requiredDuringSchedulingIgnoredDuringExecution of a pod against a node.
bool PodMatchesNodeAffinity(const Json& pod, const NodeLabels& labels,
                            const std::string& node_name);
// The sum of the weights of the pod's preferredDuringSchedulingIgnoredDuringExecution terms that
// match the node (0 without any).
std::int64_t PreferredNodeAffinityWeight(const Json& pod, const NodeLabels& labels,
                                         const std::string& node_name);

}  // namespace pjemu::api
