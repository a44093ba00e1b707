#include "emulator/scenario/expectation_kinds.h"

#include <cstdlib>

namespace pjemu::scenario::internal {

const std::vector<ExpectKind>& ExpectKinds() {
  using K = Expectation::Kind;
  // Order decides between keys an entry has together: metrics, env and pod entries all may
  // name a pod, so the pod kind comes after them.
  static const std::vector<ExpectKind> kKinds = {
      {K::kCondition, {"condition"}, {}, "condition", 0, ReadConditionExpect, CheckCondition},
      {K::kConditionsSeen,
       {"conditions_seen"},
       {},
       "conditions_seen",
       1,
       ReadConditionsSeenExpect,
       CheckConditionsSeen},
      {K::kMetrics, {"metrics"}, {"pod"}, "metrics", 9, ReadMetricsExpect, CheckMetrics},
      {K::kNoProcessLeft,
       {"no_process_left"},
       {},
       "no_process_left",
       10,
       ReadNoProcessLeftExpect,
       CheckNoProcessLeft},
      {K::kEnv, {"env"}, {"pod", "value"}, "env", 4, ReadEnvExpect, CheckEnv},
      {K::kPod,
       {"pod"},
       {"phase", "restarts", "recreations", "scheduled_reason", "waiting_reason",
        "terminated_reason", "exists"},
       "pod",
       2,
       ReadPodExpect,
       CheckPod},
      {K::kEvent, {"event"}, {}, "event", 3, ReadEventExpect, CheckEvent},
      {K::kDuration,
       {"duration_at_most", "duration_at_least"},
       {},
       "duration_at_most/_at_least",
       5,
       ReadDurationExpect,
       CheckDuration},
      {K::kRejected, {"rejected"}, {}, "rejected", 6, ReadRejectedExpect, CheckRejected},
      {K::kJobGone, {"job_gone"}, {}, "job_gone", 7, ReadJobGoneExpect, CheckJobGone},
      {K::kPodCount, {"pods"}, {}, "pods", 8, ReadPodCountExpect, CheckPodCount},
      {K::kWorkloadCondition,
       {"workload_condition"},
       {},
       "workload_condition",
       11,
       ReadWorkloadConditionExpect,
       CheckWorkloadCondition},
  };
  return kKinds;
}

const ExpectKind& ExpectKindOf(Expectation::Kind kind) {
  for (const ExpectKind& k : ExpectKinds()) {
    if (k.kind == kind) return k;
  }
  std::abort();  // every Kind has an entry above
}

}  // namespace pjemu::scenario::internal
