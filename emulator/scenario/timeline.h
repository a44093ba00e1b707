// Timeline: what a scenario run saw, as data for reports (report_html.h, junit.h): job condition
// changes, pod phase changes, submissions and faults, each at its offset from the submit, plus
// the trainer's loss points when a run had a real trainer. The runner fills it next to its
// text timeline; nothing in it is judged.
// Thread safety: plain values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emulator/common/clock.h"

namespace pjemu::scenario {

struct TimelineEvent {
  enum class Kind { kSubmit, kJobCondition, kJobDeleted, kPodPhase, kPodDeleted, kFault };
  Duration at{0};      // since the submit
  Kind kind = Kind::kSubmit;
  std::string object;  // "ns/name" of the job or pod; the fault's id for kFault
  std::string state;   // the condition type, the pod phase, "accepted"/the error, the fault
  bool ok = true;      // kSubmit and kFault: whether it went through
};

// One trainer metrics point (trainer/README.md "Metrics file", type step).
struct LossPoint {
  double step = 0;
  double loss = 0;
};

struct Timeline {
  std::vector<TimelineEvent> events;                   // in the order seen
  std::map<std::string, std::vector<LossPoint>> loss;  // "ns/pod" (rank) -> points
};

}  // namespace pjemu::scenario
