// Taints and tolerations (core/v1): a node's spec.taints and a pod's spec.tolerations, matched
// as the scheduler's TaintToleration plugin and the taint-eviction controller match them
// (a toleration with an empty effect matches every effect; an empty key with operator Exists
// matches every key; operator "" or Equal compares values, Exists ignores them).
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::api {

inline constexpr char kNoSchedule[] = "NoSchedule";
inline constexpr char kPreferNoSchedule[] = "PreferNoSchedule";
inline constexpr char kNoExecute[] = "NoExecute";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule or NoExecute
};

struct Toleration {
  std::string key;
  std::string op;  // "", "Equal" or "Exists"
  std::string value;
  std::string effect;                      // "" = every effect
  std::optional<std::int64_t> seconds;     // tolerationSeconds (NoExecute only)
  bool Tolerates(const Taint& taint) const;
};

// A node's spec.taints and a pod's spec.tolerations (malformed entries are skipped: admission
// refused them already).
std::vector<Taint> TaintsOf(const Json& node);
std::vector<Toleration> TolerationsOf(const Json& pod);
Json TaintToJson(const Taint& taint);

// The first taint (in the node's order) with one of `effects` that no toleration tolerates.
std::optional<Taint> FirstUntolerated(const std::vector<Taint>& taints,
                                      const std::vector<Toleration>& tolerations,
                                      const std::vector<std::string>& effects);
// How many PreferNoSchedule taints are not tolerated (the TaintToleration score's count).
int UntoleratedPreferNoSchedule(const std::vector<Taint>& taints,
                                const std::vector<Toleration>& tolerations);
// The taint-eviction controller's decision for a pod on a node with these NoExecute taints:
// nullopt = not evicted (no untolerated taint and no finite tolerationSeconds), 0 = evict at
// once, else evict after that many seconds (the minimum tolerationSeconds of the matching
// tolerations).
std::optional<std::int64_t> NoExecuteEvictionDelay(const std::vector<Taint>& taints,
                                                   const std::vector<Toleration>& tolerations);

// Admission of a taint list (node spec.taints or a cluster config's taints): kInvalid naming
// `field` ("spec.taints[0].effect: Unsupported value: ...").
Status ValidateTaints(const Json& taints, const std::string& field);

}  // namespace pjemu::api
