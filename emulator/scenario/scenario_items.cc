// The faults: entries of a scenario file: the trigger (at, when or after), then the action, one
// entry of kFaultActions per value of `action:`. The expect: entries are in expectation_items.cc.
#include <csignal>
#include <cstring>
#include <regex>
#include <string_view>

#include "emulator/scenario/yaml_reader.h"

namespace pjemu::scenario::internal {

namespace {

Result<int> SignalNumber(const std::string& name) {
  for (int sig = 1; sig < 32; ++sig) {
    const char* abbrev = sigabbrev_np(sig);
    if (abbrev != nullptr && (name == abbrev || name == std::string("SIG") + abbrev)) return sig;
  }
  return Status(Code::kInvalid, "unknown signal \"" + name + "\"");
}

std::string& RuleMessage(faults::FaultAction& a) { return a.api_rule.message; }
std::string& EvictionMessage(faults::FaultAction& a) { return a.message; }
Duration& RuleDuration(faults::FaultAction& a) { return a.api_duration; }
Duration& PullDelay(faults::FaultAction& a) { return a.pull_delay; }

Status PullDelayNeeds(Reader& r, const YAML::Node& n, const faults::FaultAction& a) {
  if (a.image.empty() || !n["duration"]) {
    return r.Error(n, "faults[]", "pull-delay needs image and duration");
  }
  return Status::Ok();
}

// The injector's rule check, its "field: problem" message turned into a file:line one.
Status ApiErrorsNeed(Reader& r, const YAML::Node& n, const faults::FaultAction& a) {
  Status s = faults::ValidateRule(a.api_rule);
  if (s.ok()) return s;
  return r.Error(n, "faults[]." + s.message().substr(0, s.message().find(':')),
                 s.message().substr(s.message().find(':') + 2));
}

// One value of `action:`: the injector's kind and what the action adds to reading the fields.
// Its name is the injector's (faults::ActionName), or for a hook the hook's name.
struct FaultActionEntry {
  faults::ActionKind kind;
  std::string_view hook;  // kHook: the name the runner registers it under
  // Checked once the target fields (pod ... image) are read.
  Status (*target_check)(Reader&, const YAML::Node&, const faults::FaultAction&) = nullptr;
  // Checked once every field is read.
  Status (*check)(Reader&, const YAML::Node&, const faults::FaultAction&) = nullptr;
  // Where `message:` and `duration:` go.
  std::string& (*message)(faults::FaultAction&) = RuleMessage;
  Duration& (*duration)(faults::FaultAction&) = RuleDuration;
};

// Every action, once, in the order the "supported values" message lists them.
constexpr FaultActionEntry kFaultActions[] = {
    {.kind = faults::ActionKind::kKill},
    {.kind = faults::ActionKind::kExit},
    {.kind = faults::ActionKind::kHang},
    {.kind = faults::ActionKind::kDeletePod},
    {.kind = faults::ActionKind::kEvict, .message = EvictionMessage},
    {.kind = faults::ActionKind::kOom},
    {.kind = faults::ActionKind::kApiErrors, .check = ApiErrorsNeed},
    {.kind = faults::ActionKind::kHook, .hook = "restart-controller"},
    {.kind = faults::ActionKind::kPatchJob},
    {.kind = faults::ActionKind::kNodeDown},
    {.kind = faults::ActionKind::kNodeUp},
    {.kind = faults::ActionKind::kPullDelay, .target_check = PullDelayNeeds, .duration = PullDelay},
    {.kind = faults::ActionKind::kCordon},
    {.kind = faults::ActionKind::kUncordon},
    {.kind = faults::ActionKind::kEvictPod},
    {.kind = faults::ActionKind::kDrain},
};

std::string_view NameOf(const FaultActionEntry& entry) {
  return entry.kind == faults::ActionKind::kHook ? entry.hook : faults::ActionName(entry.kind);
}

std::string FaultActionNames() {
  std::string out;
  for (const FaultActionEntry& entry : kFaultActions) {
    out += (out.empty() ? "" : ", ") + std::string(NameOf(entry));
  }
  return out;
}

Result<const FaultActionEntry*> ReadActionName(Reader& r, const YAML::Node& n) {
  if (!n["action"]) return r.Error(n, "faults[].action", "Required value");
  ASSIGN_OR_RETURN(std::string action, r.String(n["action"], "faults[].action"));
  for (const FaultActionEntry& entry : kFaultActions) {
    if (NameOf(entry) == action) return &entry;
  }
  return r.Error(n["action"], "faults[].action",
                 "Unsupported value: \"" + action + "\": supported values: " + FaultActionNames());
}

// when: {log|metrics, pod, container, namespace}: the pod whose log or metrics are watched.
Status ReadWatchedPod(Reader& r, const YAML::Node& w, faults::PodTarget* pod) {
  if (!w["pod"]) return r.Error(w, "faults[].when.pod", "Required value");
  ASSIGN_OR_RETURN(pod->name, r.String(w["pod"], "faults[].when.pod"));
  if (w["container"]) {
    ASSIGN_OR_RETURN(pod->container, r.String(w["container"], "faults[].when.container"));
  }
  if (w["namespace"]) {
    ASSIGN_OR_RETURN(pod->ns, r.String(w["namespace"], "faults[].when.namespace"));
  }
  return Status::Ok();
}

Status ReadLogTrigger(Reader& r, const YAML::Node& w, faults::Trigger* t) {
  t->kind = faults::Trigger::Kind::kLogMatch;
  ASSIGN_OR_RETURN(t->regex, r.String(w["log"], "faults[].when.log"));
  try {
    std::regex check(t->regex);
  } catch (const std::regex_error& e) {
    return r.Error(w["log"], "faults[].when.log", std::string("invalid regex: ") + e.what());
  }
  return Status::Ok();
}

Status ReadMetricsTrigger(Reader& r, const YAML::Node& w, faults::Trigger* t) {
  t->kind = faults::Trigger::Kind::kMetrics;
  const YAML::Node m = w["metrics"];
  RETURN_IF_ERROR(r.Keys(m, "faults[].when.metrics", {"step", "epoch"}));
  if (m["step"]) {
    ASSIGN_OR_RETURN(int step, r.Int(m["step"], "faults[].when.metrics.step"));
    t->step = step;
  }
  if (m["epoch"]) {
    ASSIGN_OR_RETURN(int epoch, r.Int(m["epoch"], "faults[].when.metrics.epoch"));
    t->epoch = epoch;
  }
  if (t->step <= 0 && t->epoch <= 0) {
    return r.Error(m, "faults[].when.metrics", "give a step or an epoch above 0");
  }
  return Status::Ok();
}

Status ReadConditionTrigger(Reader& r, const YAML::Node& w, faults::Trigger* t) {
  if (!w["job"] || !w["condition"]) {
    return r.Error(w, "faults[].when", "needs job and condition, log and pod, or metrics and pod");
  }
  t->kind = faults::Trigger::Kind::kJobCondition;
  ASSIGN_OR_RETURN(t->job, r.String(w["job"], "faults[].when.job"));
  ASSIGN_OR_RETURN(t->condition, r.String(w["condition"], "faults[].when.condition"));
  return Status::Ok();
}

Status ReadWhen(Reader& r, const YAML::Node& w, faults::Trigger* t) {
  RETURN_IF_ERROR(r.Keys(w, "faults[].when",
                         {"job", "condition", "log", "metrics", "pod", "container", "namespace"}));
  if (w["log"] || w["metrics"]) RETURN_IF_ERROR(ReadWatchedPod(r, w, &t->pod));
  if (w["log"]) return ReadLogTrigger(r, w, t);
  if (w["metrics"]) return ReadMetricsTrigger(r, w, t);
  return ReadConditionTrigger(r, w, t);
}

// Exactly one of at, when and after; then delay and jitter.
Status ReadTrigger(Reader& r, const YAML::Node& n, faults::Trigger* t) {
  int triggers = (n["at"] ? 1 : 0) + (n["when"] ? 1 : 0) + (n["after"] ? 1 : 0);
  if (triggers != 1) return r.Error(n, "faults[]", "give exactly one trigger: at, when or after");
  if (n["at"]) {
    t->kind = faults::Trigger::Kind::kAt;
    ASSIGN_OR_RETURN(t->delay, r.Dur(n["at"], "faults[].at"));
  } else if (n["when"]) {
    RETURN_IF_ERROR(ReadWhen(r, n["when"], t));
  } else {
    t->kind = faults::Trigger::Kind::kAfterFault;
    ASSIGN_OR_RETURN(t->fault, r.String(n["after"], "faults[].after"));
  }
  if (n["delay"]) {
    ASSIGN_OR_RETURN(t->delay, r.Dur(n["delay"], "faults[].delay"));
  }
  if (n["jitter"]) {
    ASSIGN_OR_RETURN(t->jitter, r.Dur(n["jitter"], "faults[].jitter"));
  }
  return Status::Ok();
}

// What the action acts on: pod, selector, namespace, pick, node (and its timing), image.
Status ReadTargetFields(Reader& r, const YAML::Node& n, faults::FaultAction* a) {
  if (n["pod"]) {
    ASSIGN_OR_RETURN(a->target.name, r.String(n["pod"], "faults[].pod"));
  }
  if (n["selector"]) {
    ASSIGN_OR_RETURN(a->target.label_selector, r.String(n["selector"], "faults[].selector"));
  }
  if (n["namespace"]) {
    ASSIGN_OR_RETURN(a->target.ns, r.String(n["namespace"], "faults[].namespace"));
  }
  if (n["pick"]) {
    ASSIGN_OR_RETURN(std::string pick, r.String(n["pick"], "faults[].pick"));
    if (pick != "all" && pick != "random") {
      return r.Error(n["pick"], "faults[].pick",
                     "Unsupported value: \"" + pick + "\": supported values: all, random");
    }
    a->pick_random = pick == "random";
  }
  if (n["node"]) {
    ASSIGN_OR_RETURN(a->node, r.String(n["node"], "faults[].node"));
  }
  if (n["grace"]) {
    ASSIGN_OR_RETURN(a->node_timing.grace, r.Dur(n["grace"], "faults[].grace"));
  }
  if (n["eviction"]) {
    ASSIGN_OR_RETURN(a->node_timing.eviction, r.Dur(n["eviction"], "faults[].eviction"));
  }
  if (n["image"]) {
    ASSIGN_OR_RETURN(a->image, r.String(n["image"], "faults[].image"));
  }
  return Status::Ok();
}

// container, signal, exit_code: what a process action does.
Status ReadProcessFields(Reader& r, const YAML::Node& n, faults::FaultAction* a) {
  if (n["container"]) {
    ASSIGN_OR_RETURN(a->target.container, r.String(n["container"], "faults[].container"));
  }
  if (n["signal"]) {
    ASSIGN_OR_RETURN(std::string sig, r.String(n["signal"], "faults[].signal"));
    auto num = SignalNumber(sig);
    if (!num.ok()) return r.Error(n["signal"], "faults[].signal", num.status().message());
    a->signal = *num;
  }
  if (n["exit_code"]) {
    ASSIGN_OR_RETURN(a->exit_code, r.Int(n["exit_code"], "faults[].exit_code"));
  }
  return Status::Ok();
}

// verb, resource, nth, rate, code: the api-errors rule.
Status ReadApiRuleFields(Reader& r, const YAML::Node& n, faults::ClientFaultRule* rule) {
  if (n["verb"]) {
    ASSIGN_OR_RETURN(rule->verb, r.String(n["verb"], "faults[].verb"));
  }
  if (n["resource"]) {
    ASSIGN_OR_RETURN(rule->resource, r.String(n["resource"], "faults[].resource"));
  }
  if (n["nth"]) {
    ASSIGN_OR_RETURN(rule->nth, r.Int(n["nth"], "faults[].nth"));
  }
  if (n["rate"] && !YAML::convert<double>::decode(n["rate"], rule->rate)) {
    return r.Error(n["rate"], "faults[].rate", "expected a number in [0, 1]");
  }
  if (n["code"]) {
    ASSIGN_OR_RETURN(std::string code, r.String(n["code"], "faults[].code"));
    rule->code = CodeFromReason(code);
    if (std::string(ReasonOf(rule->code)) != code) {
      return r.Error(n["code"], "faults[].code",
                     "unknown reason \"" + code + "\" (ServiceUnavailable, Conflict, ...)");
    }
  }
  return Status::Ok();
}

// What the action does, after its target: the process and API-rule fields, then message,
// duration (each where the action puts it), job, timeout (a drain's) and patch.
Status ReadArgumentFields(Reader& r, const YAML::Node& n, const FaultActionEntry& entry,
                          faults::FaultAction* a) {
  RETURN_IF_ERROR(ReadProcessFields(r, n, a));
  RETURN_IF_ERROR(ReadApiRuleFields(r, n, &a->api_rule));
  if (n["message"]) {
    ASSIGN_OR_RETURN(entry.message(*a), r.String(n["message"], "faults[].message"));
  }
  if (n["duration"]) {
    ASSIGN_OR_RETURN(entry.duration(*a), r.Dur(n["duration"], "faults[].duration"));
  }
  if (n["job"]) {
    ASSIGN_OR_RETURN(a->job, r.String(n["job"], "faults[].job"));
  }
  if (n["timeout"]) {
    if (entry.kind != faults::ActionKind::kDrain) {
      return r.Error(n["timeout"], "faults[].timeout", "only a drain has a timeout");
    }
    ASSIGN_OR_RETURN(a->timeout, r.Dur(n["timeout"], "faults[].timeout"));
  }
  if (n["patch"]) {
    ASSIGN_OR_RETURN(a->patch, r.ToJson(n["patch"]));
  }
  return Status::Ok();
}

}  // namespace

Status Reader::Fault(const YAML::Node& n, faults::FaultSpec* f) {
  RETURN_IF_ERROR(Keys(
      n, "faults[]", {"id",   "at",       "when", "after",     "delay",     "jitter",  "action",
                      "pod",  "selector", "pick", "namespace", "container", "signal",  "exit_code",
                      "verb", "resource", "rate", "nth",       "code",      "message", "duration",
                      "job",  "patch",    "node", "grace",     "eviction",  "image",   "timeout"}));
  if (!n["id"]) return Error(n, "faults[].id", "Required value");
  ASSIGN_OR_RETURN(f->id, String(n["id"], "faults[].id"));
  RETURN_IF_ERROR(ReadTrigger(*this, n, &f->trigger));
  ASSIGN_OR_RETURN(const FaultActionEntry* entry, ReadActionName(*this, n));
  faults::FaultAction& a = f->action;
  a.kind = entry->kind;
  if (a.kind == faults::ActionKind::kHook) a.hook = std::string(entry->hook);
  if (a.kind == faults::ActionKind::kDrain || a.kind == faults::ActionKind::kCordon ||
      a.kind == faults::ActionKind::kUncordon) {
    a.node.clear();  // unless named: the cluster's only node
  }
  RETURN_IF_ERROR(ReadTargetFields(*this, n, &a));
  if (entry->target_check != nullptr) RETURN_IF_ERROR(entry->target_check(*this, n, a));
  RETURN_IF_ERROR(ReadArgumentFields(*this, n, *entry, &a));
  if (entry->check != nullptr) return entry->check(*this, n, a);
  return Status::Ok();
}

}  // namespace pjemu::scenario::internal
