// The kinds of expect: entries (private to emulator/scenario), one ExpectKind each, listed once in
// ExpectKinds(): the key that selects the kind, how its fields are read (expectation_items.cc)
// and how it is judged against the finished run (expectation.cc).
// Thread safety: the table is immutable; the functions are pure apart from the Client reads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/scenario/expectation.h"
#include "emulator/scenario/scenario.h"

namespace YAML {
class Node;
}

namespace pjemu::scenario::internal {

class Reader;

// What a check reads: the scenario, what the runner saw, the final cluster state, and the job
// the expectation is about (its `job:`, else the first submitted job) as "ns/name" and parts.
struct Judging {
  const Scenario& scenario;
  const Observed& observed;
  client::Client& client;
  std::string key, ns, name;
};

// Reads the kind's own fields into e (the shared ones are read before); kInvalid as
// "path:line: field: problem".
using ReadExpectFn = Status (*)(Reader& r, const YAML::Node& n, Expectation* e);
// The failure ("" = it held), without the "path:line: " prefix.
using CheckExpectFn = std::string (*)(const Expectation& e, const Judging& j);

struct ExpectKind {
  Expectation::Kind kind;
  std::vector<std::string_view> keys;    // any of them selects the kind
  std::vector<std::string_view> fields;  // further fields of its own
  std::string_view shown;                // its name in the "say what to expect" message
  int shown_at;                          // its place in that message
  ReadExpectFn read;
  CheckExpectFn check;
};

// Every kind, once. An entry selects the first kind (in this order) one of whose keys it has.
const std::vector<ExpectKind>& ExpectKinds();
const ExpectKind& ExpectKindOf(Expectation::Kind kind);

// Fields every entry may have, read before the kind's own: job, reason, message, container,
// count, at_least, selector.
Status ReadSharedExpectFields(Reader& r, const YAML::Node& n, Expectation* e);

// The readers (expectation_items.cc).
Status ReadConditionExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadConditionsSeenExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadWorkloadConditionExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadMetricsExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadNoProcessLeftExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadEnvExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadPodExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadEventExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadDurationExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadRejectedExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadJobGoneExpect(Reader& r, const YAML::Node& n, Expectation* e);
Status ReadPodCountExpect(Reader& r, const YAML::Node& n, Expectation* e);

// The checks (expectation.cc). no_process_left holds here: CheckProcessesLeft judges it once
// the cluster has stopped.
std::string CheckCondition(const Expectation& e, const Judging& j);
std::string CheckConditionsSeen(const Expectation& e, const Judging& j);
// The job's Kueue Workload (its kueue.x-k8s.io/job-uid label) has condition `condition` True,
// with reason and message matching.
std::string CheckWorkloadCondition(const Expectation& e, const Judging& j);
std::string CheckMetrics(const Expectation& e, const Judging& j);
std::string CheckNoProcessLeft(const Expectation& e, const Judging& j);
std::string CheckEnv(const Expectation& e, const Judging& j);
std::string CheckPod(const Expectation& e, const Judging& j);
std::string CheckEvent(const Expectation& e, const Judging& j);
std::string CheckDuration(const Expectation& e, const Judging& j);
std::string CheckRejected(const Expectation& e, const Judging& j);
std::string CheckJobGone(const Expectation& e, const Judging& j);
std::string CheckPodCount(const Expectation& e, const Judging& j);

}  // namespace pjemu::scenario::internal
