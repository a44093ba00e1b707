// The expect: entries of a scenario file: the shared fields, then the kind's own, the kind
// picked by ExpectKinds() (expectation_kinds.cc).
#include <algorithm>
#include <set>

#include "emulator/scenario/expectation.h"
#include "emulator/scenario/expectation_kinds.h"
#include "emulator/scenario/yaml_reader.h"

namespace pjemu::scenario::internal {

namespace {

constexpr const char* kSharedFields[] = {"job",   "reason",   "message", "container",
                                         "count", "at_least", "selector"};

// Every field an expect: entry may have: the shared ones, and each kind's keys and fields.
const std::set<std::string>& ExpectFieldNames() {
  static const std::set<std::string> kNames = [] {
    std::set<std::string> names(std::begin(kSharedFields), std::end(kSharedFields));
    for (const ExpectKind& k : ExpectKinds()) {
      names.insert(k.keys.begin(), k.keys.end());
      names.insert(k.fields.begin(), k.fields.end());
    }
    return names;
  }();
  return kNames;
}

// "condition, conditions_seen, ... or no_process_left", in each kind's shown_at order.
std::string ShownKinds() {
  std::vector<const ExpectKind*> kinds;
  for (const ExpectKind& k : ExpectKinds()) kinds.push_back(&k);
  std::sort(kinds.begin(), kinds.end(),
            [](const ExpectKind* a, const ExpectKind* b) { return a->shown_at < b->shown_at; });
  std::string out;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " or " : ", ";
    out += kinds[i]->shown;
  }
  return out;
}

const ExpectKind* SelectedKind(const YAML::Node& n) {
  for (const ExpectKind& k : ExpectKinds()) {
    for (std::string_view key : k.keys) {
      if (n[std::string(key)]) return &k;
    }
  }
  return nullptr;
}

// A YAML list of strings.
Status ReadStrings(Reader& r, const YAML::Node& n, const std::string& field,
                   std::vector<std::string>* out) {
  if (!n.IsSequence()) return r.Error(n, field, "expected a list");
  for (const auto& c : n) out->push_back(c.as<std::string>());
  return Status::Ok();
}

// restarts: a count, or a bound such as ">= 1".
Status ReadRestarts(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(std::string text, r.String(n, "expect[].restarts"));
  if (!text.empty() && (text[0] == '<' || text[0] == '>' || text[0] == '=')) {
    auto check = CompareBound(text, 0);
    if (!check.ok()) return r.Error(n, "expect[].restarts", check.status().message());
    e->restarts_bound = text;
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(e->restarts, r.Int(n, "expect[].restarts"));
  return Status::Ok();
}

// The reasons a pod kind may name: scheduled_reason, waiting_reason, terminated_reason.
Status ReadPodReasons(Reader& r, const YAML::Node& n, Expectation* e) {
  if (n["scheduled_reason"]) {
    ASSIGN_OR_RETURN(e->scheduled_reason,
                     r.String(n["scheduled_reason"], "expect[].scheduled_reason"));
  }
  if (n["waiting_reason"]) {
    ASSIGN_OR_RETURN(e->waiting_reason, r.String(n["waiting_reason"], "expect[].waiting_reason"));
  }
  if (n["terminated_reason"]) {
    ASSIGN_OR_RETURN(e->terminated_reason,
                     r.String(n["terminated_reason"], "expect[].terminated_reason"));
  }
  return Status::Ok();
}

}  // namespace

Status ReadSharedExpectFields(Reader& r, const YAML::Node& n, Expectation* e) {
  if (n["job"]) {
    ASSIGN_OR_RETURN(e->job, r.String(n["job"], "expect[].job"));
  }
  if (n["reason"]) {
    ASSIGN_OR_RETURN(e->reason, r.String(n["reason"], "expect[].reason"));
  }
  if (n["message"]) {
    ASSIGN_OR_RETURN(e->message, r.String(n["message"], "expect[].message"));
  }
  if (n["container"]) {
    ASSIGN_OR_RETURN(e->container, r.String(n["container"], "expect[].container"));
  }
  if (n["count"]) {
    ASSIGN_OR_RETURN(e->count, r.Int(n["count"], "expect[].count"));
  }
  if (n["at_least"]) {
    ASSIGN_OR_RETURN(e->min_count, r.Int(n["at_least"], "expect[].at_least"));
  }
  if (n["selector"]) {
    ASSIGN_OR_RETURN(e->selector, r.String(n["selector"], "expect[].selector"));
  }
  return Status::Ok();
}

Status ReadConditionExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->condition, r.String(n["condition"], "expect[].condition"));
  return Status::Ok();
}

Status ReadWorkloadConditionExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->condition, r.String(n["workload_condition"], "expect[].workload_condition"));
  return Status::Ok();
}

Status ReadConditionsSeenExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  return ReadStrings(r, n["conditions_seen"], "expect[].conditions_seen", &e->seen);
}

// metrics: {accuracy: ">= 0.68", ...}, optionally of a pod other than the job's master.
Status ReadMetricsExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  static const std::set<std::string> kKnown = {"accuracy", "test_loss", "final_loss", "steps",
                                               "epochs"};
  const YAML::Node m = n["metrics"];
  if (!m.IsMap() || m.size() == 0) {
    return r.Error(m, "expect[].metrics",
                   "expected a map such as {accuracy: \">= 0.68\", final_loss: \"<= 1.0\"}");
  }
  for (const auto& kv : m) {
    std::string key = kv.first.as<std::string>();
    if (!kKnown.count(key)) {
      return r.Error(kv.first, "expect[].metrics." + key,
                     "unknown metric (accuracy, test_loss, final_loss, steps, epochs)");
    }
    std::string bound = kv.second.as<std::string>();
    auto check = CompareBound(bound, 0);
    if (!check.ok()) {
      return r.Error(kv.second, "expect[].metrics." + key, check.status().message());
    }
    e->metrics[key] = bound;
  }
  if (n["pod"]) {
    ASSIGN_OR_RETURN(e->pod, r.String(n["pod"], "expect[].pod"));
  }
  return Status::Ok();
}

Status ReadNoProcessLeftExpect(Reader&, const YAML::Node&, Expectation*) { return Status::Ok(); }

Status ReadEnvExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  if (!n["pod"] || !n["value"]) return r.Error(n, "expect[].env", "needs pod and value");
  ASSIGN_OR_RETURN(e->env_name, r.String(n["env"], "expect[].env"));
  ASSIGN_OR_RETURN(e->pod, r.String(n["pod"], "expect[].pod"));
  ASSIGN_OR_RETURN(e->env_value, r.String(n["value"], "expect[].value"));
  return Status::Ok();
}

Status ReadPodExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->pod, r.String(n["pod"], "expect[].pod"));
  if (n["phase"]) {
    ASSIGN_OR_RETURN(e->phase, r.String(n["phase"], "expect[].phase"));
  }
  if (n["restarts"]) RETURN_IF_ERROR(ReadRestarts(r, n["restarts"], e));
  if (n["recreations"]) {
    ASSIGN_OR_RETURN(e->recreations, r.Int(n["recreations"], "expect[].recreations"));
  }
  RETURN_IF_ERROR(ReadPodReasons(r, n, e));
  if (n["exists"]) e->exists = n["exists"].as<bool>();
  return Status::Ok();
}

Status ReadEventExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->reason, r.String(n["event"], "expect[].event"));
  return Status::Ok();
}

Status ReadDurationExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  if (n["duration_at_most"]) {
    ASSIGN_OR_RETURN(e->max_duration, r.Dur(n["duration_at_most"], "expect[].duration_at_most"));
  }
  if (n["duration_at_least"]) {
    ASSIGN_OR_RETURN(e->min_duration, r.Dur(n["duration_at_least"], "expect[].duration_at_least"));
  }
  return Status::Ok();
}

Status ReadRejectedExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->message, r.String(n["rejected"], "expect[].rejected"));
  return Status::Ok();
}

Status ReadJobGoneExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(e->job, r.String(n["job_gone"], "expect[].job_gone"));
  return Status::Ok();
}

Status ReadPodCountExpect(Reader& r, const YAML::Node& n, Expectation* e) {
  ASSIGN_OR_RETURN(int count, r.Int(n["pods"], "expect[].pods"));
  e->count = count;
  return Status::Ok();
}

Status Reader::Expect(const YAML::Node& n, Expectation* e) {
  e->line = Line(n);
  RETURN_IF_ERROR(Keys(n, "expect[]", ExpectFieldNames()));
  RETURN_IF_ERROR(ReadSharedExpectFields(*this, n, e));
  const ExpectKind* kind = SelectedKind(n);
  if (kind == nullptr) return Error(n, "expect[]", "say what to expect: " + ShownKinds());
  e->kind = kind->kind;
  return kind->read(*this, n, e);
}

}  // namespace pjemu::scenario::internal
