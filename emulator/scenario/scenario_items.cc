// The faults: and expect: entries of a scenario file.
#include <csignal>
#include <cstring>
#include <regex>
#include <set>

#include "emulator/scenario/expectation.h"
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

const std::map<std::string, faults::ActionKind>& Actions() {
  static const std::map<std::string, faults::ActionKind> kActions = {
      {"kill", faults::ActionKind::kKill},
      {"exit", faults::ActionKind::kExit},
      {"hang", faults::ActionKind::kHang},
      {"delete-pod", faults::ActionKind::kDeletePod},
      {"api-errors", faults::ActionKind::kApiErrors},
      {"restart-controller", faults::ActionKind::kHook},
      {"patch-job", faults::ActionKind::kPatchJob},
      {"evict", faults::ActionKind::kEvict},
      {"oom", faults::ActionKind::kOom},
      {"node-down", faults::ActionKind::kNodeDown},
      {"node-up", faults::ActionKind::kNodeUp},
      {"pull-delay", faults::ActionKind::kPullDelay}};
  return kActions;
}

}  // namespace

Status Reader::Fault(const YAML::Node& n, faults::FaultSpec* f) {
  RETURN_IF_ERROR(Keys(
      n, "faults[]", {"id",   "at",       "when", "after",     "delay",     "jitter",  "action",
                      "pod",  "selector", "pick", "namespace", "container", "signal",  "exit_code",
                      "verb", "resource", "rate", "nth",       "code",      "message", "duration",
                      "job",  "patch",    "node", "grace",     "eviction",  "image"}));
  if (!n["id"]) return Error(n, "faults[].id", "Required value");
  ASSIGN_OR_RETURN(f->id, String(n["id"], "faults[].id"));
  int triggers = (n["at"] ? 1 : 0) + (n["when"] ? 1 : 0) + (n["after"] ? 1 : 0);
  if (triggers != 1) return Error(n, "faults[]", "give exactly one trigger: at, when or after");
  if (n["at"]) {
    f->trigger.kind = faults::Trigger::Kind::kAt;
    ASSIGN_OR_RETURN(f->trigger.delay, Dur(n["at"], "faults[].at"));
  } else if (n["when"]) {
    const YAML::Node w = n["when"];
    RETURN_IF_ERROR(Keys(w, "faults[].when",
                         {"job", "condition", "log", "metrics", "pod", "container", "namespace"}));
    faults::Trigger& t = f->trigger;
    if (w["log"] || w["metrics"]) {
      if (!w["pod"]) return Error(w, "faults[].when.pod", "Required value");
      ASSIGN_OR_RETURN(t.pod.name, String(w["pod"], "faults[].when.pod"));
      if (w["container"]) {
        ASSIGN_OR_RETURN(t.pod.container, String(w["container"], "faults[].when.container"));
      }
      if (w["namespace"]) {
        ASSIGN_OR_RETURN(t.pod.ns, String(w["namespace"], "faults[].when.namespace"));
      }
    }
    if (w["log"]) {
      t.kind = faults::Trigger::Kind::kLogMatch;
      ASSIGN_OR_RETURN(t.regex, String(w["log"], "faults[].when.log"));
      try {
        std::regex check(t.regex);
      } catch (const std::regex_error& e) {
        return Error(w["log"], "faults[].when.log", std::string("invalid regex: ") + e.what());
      }
    } else if (w["metrics"]) {
      t.kind = faults::Trigger::Kind::kMetrics;
      const YAML::Node m = w["metrics"];
      RETURN_IF_ERROR(Keys(m, "faults[].when.metrics", {"step", "epoch"}));
      if (m["step"]) {
        ASSIGN_OR_RETURN(int step, Int(m["step"], "faults[].when.metrics.step"));
        t.step = step;
      }
      if (m["epoch"]) {
        ASSIGN_OR_RETURN(int epoch, Int(m["epoch"], "faults[].when.metrics.epoch"));
        t.epoch = epoch;
      }
      if (t.step <= 0 && t.epoch <= 0) {
        return Error(m, "faults[].when.metrics", "give a step or an epoch above 0");
      }
    } else {
      if (!w["job"] || !w["condition"]) {
        return Error(w, "faults[].when",
                     "needs job and condition, log and pod, or metrics and pod");
      }
      t.kind = faults::Trigger::Kind::kJobCondition;
      ASSIGN_OR_RETURN(t.job, String(w["job"], "faults[].when.job"));
      ASSIGN_OR_RETURN(t.condition, String(w["condition"], "faults[].when.condition"));
    }
  } else {
    f->trigger.kind = faults::Trigger::Kind::kAfterFault;
    ASSIGN_OR_RETURN(f->trigger.fault, String(n["after"], "faults[].after"));
  }
  if (n["delay"]) {
    ASSIGN_OR_RETURN(f->trigger.delay, Dur(n["delay"], "faults[].delay"));
  }
  if (n["jitter"]) {
    ASSIGN_OR_RETURN(f->trigger.jitter, Dur(n["jitter"], "faults[].jitter"));
  }
  if (!n["action"]) return Error(n, "faults[].action", "Required value");
  ASSIGN_OR_RETURN(std::string action, String(n["action"], "faults[].action"));
  auto it = Actions().find(action);
  if (it == Actions().end()) {
    return Error(n["action"], "faults[].action",
                 "Unsupported value: \"" + action +
                     "\": supported values: kill, exit, hang, delete-pod, evict, oom, "
                     "api-errors, restart-controller, patch-job, node-down, node-up, "
                     "pull-delay");
  }
  faults::FaultAction& a = f->action;
  a.kind = it->second;
  if (a.kind == faults::ActionKind::kHook) a.hook = action;
  if (n["pod"]) {
    ASSIGN_OR_RETURN(a.target.name, String(n["pod"], "faults[].pod"));
  }
  if (n["selector"]) {
    ASSIGN_OR_RETURN(a.target.label_selector, String(n["selector"], "faults[].selector"));
  }
  if (n["namespace"]) {
    ASSIGN_OR_RETURN(a.target.ns, String(n["namespace"], "faults[].namespace"));
  }
  if (n["pick"]) {
    ASSIGN_OR_RETURN(std::string pick, String(n["pick"], "faults[].pick"));
    if (pick != "all" && pick != "random") {
      return Error(n["pick"], "faults[].pick",
                   "Unsupported value: \"" + pick + "\": supported values: all, random");
    }
    a.pick_random = pick == "random";
  }
  if (n["node"]) {
    ASSIGN_OR_RETURN(a.node, String(n["node"], "faults[].node"));
  }
  if (n["grace"]) {
    ASSIGN_OR_RETURN(a.node_timing.grace, Dur(n["grace"], "faults[].grace"));
  }
  if (n["eviction"]) {
    ASSIGN_OR_RETURN(a.node_timing.eviction, Dur(n["eviction"], "faults[].eviction"));
  }
  if (n["image"]) {
    ASSIGN_OR_RETURN(a.image, String(n["image"], "faults[].image"));
  }
  if (a.kind == faults::ActionKind::kPullDelay && (a.image.empty() || !n["duration"])) {
    return Error(n, "faults[]", "pull-delay needs image and duration");
  }
  if (n["container"]) {
    ASSIGN_OR_RETURN(a.target.container, String(n["container"], "faults[].container"));
  }
  if (n["signal"]) {
    ASSIGN_OR_RETURN(std::string sig, String(n["signal"], "faults[].signal"));
    auto num = SignalNumber(sig);
    if (!num.ok()) return Error(n["signal"], "faults[].signal", num.status().message());
    a.signal = *num;
  }
  if (n["exit_code"]) {
    ASSIGN_OR_RETURN(a.exit_code, Int(n["exit_code"], "faults[].exit_code"));
  }
  if (n["verb"]) {
    ASSIGN_OR_RETURN(a.api_rule.verb, String(n["verb"], "faults[].verb"));
  }
  if (n["resource"]) {
    ASSIGN_OR_RETURN(a.api_rule.resource, String(n["resource"], "faults[].resource"));
  }
  if (n["nth"]) {
    ASSIGN_OR_RETURN(a.api_rule.nth, Int(n["nth"], "faults[].nth"));
  }
  if (n["rate"] && !YAML::convert<double>::decode(n["rate"], a.api_rule.rate)) {
    return Error(n["rate"], "faults[].rate", "expected a number in [0, 1]");
  }
  if (n["code"]) {
    ASSIGN_OR_RETURN(std::string code, String(n["code"], "faults[].code"));
    a.api_rule.code = CodeFromReason(code);
    if (std::string(ReasonOf(a.api_rule.code)) != code) {
      return Error(n["code"], "faults[].code",
                   "unknown reason \"" + code + "\" (ServiceUnavailable, Conflict, ...)");
    }
  }
  if (n["message"]) {
    ASSIGN_OR_RETURN(std::string message, String(n["message"], "faults[].message"));
    (a.kind == faults::ActionKind::kEvict ? a.message : a.api_rule.message) = message;
  }
  if (n["duration"]) {
    ASSIGN_OR_RETURN(Duration d, Dur(n["duration"], "faults[].duration"));
    (a.kind == faults::ActionKind::kPullDelay ? a.pull_delay : a.api_duration) = d;
  }
  if (n["job"]) {
    ASSIGN_OR_RETURN(a.job, String(n["job"], "faults[].job"));
  }
  if (n["patch"]) {
    ASSIGN_OR_RETURN(a.patch, ToJson(n["patch"]));
  }
  if (a.kind == faults::ActionKind::kApiErrors) {
    Status s = faults::ValidateRule(a.api_rule);
    if (!s.ok())
      return Error(n, "faults[]." + s.message().substr(0, s.message().find(':')),
                   s.message().substr(s.message().find(':') + 2));
  }
  return Status::Ok();
}

Status Reader::Expect(const YAML::Node& n, Expectation* e) {
  using K = Expectation::Kind;
  e->line = Line(n);
  RETURN_IF_ERROR(Keys(n, "expect[]",
                       {"condition",
                        "job",
                        "reason",
                        "message",
                        "conditions_seen",
                        "pod",
                        "phase",
                        "restarts",
                        "recreations",
                        "scheduled_reason",
                        "waiting_reason",
                        "exists",
                        "event",
                        "count",
                        "at_least",
                        "env",
                        "container",
                        "value",
                        "duration_at_most",
                        "duration_at_least",
                        "terminated_reason",
                        "rejected",
                        "job_gone",
                        "pods",
                        "selector",
                        "metrics",
                        "no_process_left"}));
  if (n["job"]) {
    ASSIGN_OR_RETURN(e->job, String(n["job"], "expect[].job"));
  }
  if (n["reason"]) {
    ASSIGN_OR_RETURN(e->reason, String(n["reason"], "expect[].reason"));
  }
  if (n["message"]) {
    ASSIGN_OR_RETURN(e->message, String(n["message"], "expect[].message"));
  }
  if (n["container"]) {
    ASSIGN_OR_RETURN(e->container, String(n["container"], "expect[].container"));
  }
  if (n["count"]) {
    ASSIGN_OR_RETURN(e->count, Int(n["count"], "expect[].count"));
  }
  if (n["at_least"]) {
    ASSIGN_OR_RETURN(e->min_count, Int(n["at_least"], "expect[].at_least"));
  }
  if (n["selector"]) {
    ASSIGN_OR_RETURN(e->selector, String(n["selector"], "expect[].selector"));
  }
  if (n["condition"]) {
    e->kind = K::kCondition;
    ASSIGN_OR_RETURN(e->condition, String(n["condition"], "expect[].condition"));
  } else if (n["conditions_seen"]) {
    e->kind = K::kConditionsSeen;
    if (!n["conditions_seen"].IsSequence()) {
      return Error(n["conditions_seen"], "expect[].conditions_seen", "expected a list");
    }
    for (const auto& c : n["conditions_seen"]) e->seen.push_back(c.as<std::string>());
  } else if (n["metrics"]) {
    e->kind = K::kMetrics;
    if (!n["metrics"].IsMap() || n["metrics"].size() == 0) {
      return Error(n["metrics"], "expect[].metrics",
                   "expected a map such as {accuracy: \">= 0.68\", final_loss: \"<= 1.0\"}");
    }
    for (const auto& kv : n["metrics"]) {
      std::string key = kv.first.as<std::string>();
      static const std::set<std::string> kKnown = {"accuracy", "test_loss", "final_loss", "steps",
                                                   "epochs"};
      if (!kKnown.count(key)) {
        return Error(kv.first, "expect[].metrics." + key,
                     "unknown metric (accuracy, test_loss, final_loss, steps, epochs)");
      }
      std::string bound = kv.second.as<std::string>();
      auto check = CompareBound(bound, 0);
      if (!check.ok()) return Error(kv.second, "expect[].metrics." + key, check.status().message());
      e->metrics[key] = bound;
    }
    if (n["pod"]) {
      ASSIGN_OR_RETURN(e->pod, String(n["pod"], "expect[].pod"));
    }
  } else if (n["no_process_left"]) {
    e->kind = K::kNoProcessLeft;
  } else if (n["env"]) {
    e->kind = K::kEnv;
    if (!n["pod"] || !n["value"]) return Error(n, "expect[].env", "needs pod and value");
    ASSIGN_OR_RETURN(e->env_name, String(n["env"], "expect[].env"));
    ASSIGN_OR_RETURN(e->pod, String(n["pod"], "expect[].pod"));
    ASSIGN_OR_RETURN(e->env_value, String(n["value"], "expect[].value"));
  } else if (n["pod"]) {
    e->kind = K::kPod;
    ASSIGN_OR_RETURN(e->pod, String(n["pod"], "expect[].pod"));
    if (n["phase"]) {
      ASSIGN_OR_RETURN(e->phase, String(n["phase"], "expect[].phase"));
    }
    if (n["restarts"]) {
      ASSIGN_OR_RETURN(std::string r, String(n["restarts"], "expect[].restarts"));
      if (!r.empty() && (r[0] == '<' || r[0] == '>' || r[0] == '=')) {
        auto check = CompareBound(r, 0);
        if (!check.ok()) return Error(n["restarts"], "expect[].restarts", check.status().message());
        e->restarts_bound = r;
      } else {
        ASSIGN_OR_RETURN(e->restarts, Int(n["restarts"], "expect[].restarts"));
      }
    }
    if (n["recreations"]) {
      ASSIGN_OR_RETURN(e->recreations, Int(n["recreations"], "expect[].recreations"));
    }
    if (n["scheduled_reason"]) {
      ASSIGN_OR_RETURN(e->scheduled_reason,
                       String(n["scheduled_reason"], "expect[].scheduled_reason"));
    }
    if (n["waiting_reason"]) {
      ASSIGN_OR_RETURN(e->waiting_reason, String(n["waiting_reason"], "expect[].waiting_reason"));
    }
    if (n["terminated_reason"]) {
      ASSIGN_OR_RETURN(e->terminated_reason,
                       String(n["terminated_reason"], "expect[].terminated_reason"));
    }
    if (n["exists"]) e->exists = n["exists"].as<bool>();
  } else if (n["event"]) {
    e->kind = K::kEvent;
    ASSIGN_OR_RETURN(e->reason, String(n["event"], "expect[].event"));
  } else if (n["duration_at_most"] || n["duration_at_least"]) {
    e->kind = K::kDuration;
    if (n["duration_at_most"]) {
      ASSIGN_OR_RETURN(e->max_duration, Dur(n["duration_at_most"], "expect[].duration_at_most"));
    }
    if (n["duration_at_least"]) {
      ASSIGN_OR_RETURN(e->min_duration, Dur(n["duration_at_least"], "expect[].duration_at_least"));
    }
  } else if (n["rejected"]) {
    e->kind = K::kRejected;
    ASSIGN_OR_RETURN(e->message, String(n["rejected"], "expect[].rejected"));
  } else if (n["job_gone"]) {
    e->kind = K::kJobGone;
    ASSIGN_OR_RETURN(e->job, String(n["job_gone"], "expect[].job_gone"));
  } else if (n["pods"]) {
    e->kind = K::kPodCount;
    ASSIGN_OR_RETURN(int c, Int(n["pods"], "expect[].pods"));
    e->count = c;
  } else {
    return Error(
        n, "expect[]",
        "say what to expect: condition, conditions_seen, pod, event, env, "
        "duration_at_most/_at_least, rejected, job_gone, pods, metrics or no_process_left");
  }
  return Status::Ok();
}

}  // namespace pjemu::scenario::internal
