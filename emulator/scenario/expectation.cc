// CheckExpectations: each expect: entry judged by the check of its kind (expectation_kinds.h);
// CheckProcessesLeft: no_process_left, once the cluster has stopped.
#include "emulator/scenario/expectation.h"

#include <algorithm>
#include <regex>
#include <sstream>

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/workload.h"
#include "emulator/client/workloads.h"
#include "emulator/common/strings.h"
#include "emulator/scenario/expectation_kinds.h"

namespace pjemu::scenario {

namespace {

using K = Expectation::Kind;
using internal::Judging;

bool Matches(const std::string& pattern, const std::string& text) {
  if (pattern.empty()) return true;
  try {
    return std::regex_search(text, std::regex(pattern));
  } catch (const std::regex_error&) {
    return text.find(pattern) != std::string::npos;
  }
}

// The job an expectation is about, "ns/name": its job: (namespace "default" unless given), else
// the first submitted job.
std::string JobKey(const Observed& ob, const std::string& job) {
  if (job.empty()) return ob.job_keys.empty() ? "" : ob.job_keys.front();
  if (job.find('/') != std::string::npos) return job;
  return "default/" + job;
}

std::pair<std::string, std::string> Split(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// The tails of the logs of the job's pods ("<job>-..."; every pod when job is "").
std::string LogTails(const Observed& ob, const std::string& job) {
  std::string out;
  for (const auto& [pod, tail] : ob.log_tails) {
    if (!job.empty() && pod.rfind(job + "-", 0) != 0) continue;
    out += "\n    log " + pod + ":";
    std::istringstream in(tail);
    std::string line;
    while (std::getline(in, line)) out += "\n      " + line;
  }
  return out;
}

std::string Context(const Observed& ob, const std::string& key) {
  std::string out;
  auto it = ob.history.find(key);
  out += "\n    conditions seen: " + (it == ob.history.end() ? "(none)" : Join(it->second, ", "));
  if (!ob.fault_log.empty()) out += "\n    faults: " + Join(ob.fault_log, "; ");
  out += LogTails(ob, key.substr(key.find('/') + 1));
  return out;
}

// The trainer's figures from its metrics file: the last epoch record's accuracy and test loss
// (final_loss: the last epoch's test loss, else the last step's loss), the highest step, and
// the number of epoch records.
std::map<std::string, double> MetricFigures(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  double epochs = 0;
  while (std::getline(in, line)) {
    Json rec = Json::parse(line, nullptr, false);
    if (!rec.is_object()) continue;
    std::string type = rec.value("type", "");
    if (type == "step") {
      out["steps"] = std::max(out["steps"], rec.value("step", 0.0));
      if (!out.count("test_loss")) out["final_loss"] = rec.value("loss", 0.0);
    } else if (type == "epoch") {
      ++epochs;
      out["accuracy"] = rec.value("accuracy", 0.0);
      out["test_loss"] = rec.value("test_loss", 0.0);
      out["final_loss"] = out["test_loss"];
    }
  }
  out["epochs"] = epochs;
  return out;
}

// The pod's containers, as the pod checks read them: restarts summed, the last waiting reason,
// and every terminated reason (current state and last state).
struct ContainerFacts {
  int restarts = 0;
  std::string waiting;
  std::vector<std::string> terminated;
};

ContainerFacts ReadContainerFacts(const Json& status) {
  ContainerFacts facts;
  for (const Json& cs : status.value("containerStatuses", Json::array())) {
    facts.restarts += cs.value("restartCount", 0);
    const Json st = cs.value("state", Json::object());
    if (st.contains("waiting")) facts.waiting = st["waiting"].value("reason", "");
    for (const char* which : {"state", "lastState"}) {
      const Json t = cs.value(which, Json::object()).value("terminated", Json::object());
      if (t.contains("reason")) facts.terminated.push_back(t.value("reason", ""));
    }
  }
  return facts;
}

// exists and recreations: what the pod's life says, whatever its status.
std::string CheckPodLife(const Expectation& e, const Observed& ob, bool exists) {
  if (e.exists.has_value() && *e.exists != exists) {
    return "expected pod " + e.pod + (*e.exists ? " to exist" : " to be gone") + ", it " +
           (exists ? "exists" : "does not exist");
  }
  auto uids = ob.pod_uids.find(e.pod);
  int created = uids == ob.pod_uids.end() ? 0 : static_cast<int>(uids->second.size());
  if (e.recreations && std::max(created - 1, 0) != *e.recreations) {
    return "expected pod " + e.pod + " re-created " + std::to_string(*e.recreations) +
           " times, it was re-created " + std::to_string(std::max(created - 1, 0)) + " times";
  }
  return "";
}

bool AsksPodStatus(const Expectation& e) {
  return e.phase || e.restarts || !e.restarts_bound.empty() || e.scheduled_reason ||
         e.waiting_reason || e.terminated_reason;
}

// terminated_reason, restarts (a count or a bound) and waiting_reason.
std::string CheckPodContainers(const Expectation& e, const Judging& j, const Json& status) {
  const ContainerFacts facts = ReadContainerFacts(status);
  const std::vector<std::string>& terminated = facts.terminated;
  if (e.terminated_reason &&
      std::find(terminated.begin(), terminated.end(), *e.terminated_reason) == terminated.end()) {
    return "expected pod " + e.pod + " to have a container terminated " + *e.terminated_reason +
           ", got [" + Join(terminated, ", ") + "]" + Context(j.observed, j.key);
  }
  if (e.restarts && facts.restarts != *e.restarts) {
    return "expected pod " + e.pod + " restarts " + std::to_string(*e.restarts) + ", got " +
           std::to_string(facts.restarts) + Context(j.observed, j.key);
  }
  if (auto held = CompareBound(e.restarts_bound, facts.restarts);
      !e.restarts_bound.empty() && !(held.ok() && *held)) {
    return "expected pod " + e.pod + " restarts " + e.restarts_bound + ", got " +
           std::to_string(facts.restarts) + Context(j.observed, j.key);
  }
  if (e.waiting_reason && facts.waiting != *e.waiting_reason) {
    return "expected pod " + e.pod + " waiting reason " + *e.waiting_reason + ", got " +
           (facts.waiting.empty() ? "(not waiting)" : facts.waiting);
  }
  return "";
}

std::string CheckPodScheduled(const Expectation& e, const Json& status) {
  if (!e.scheduled_reason) return "";
  std::string got = "(no PodScheduled condition)";
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == "PodScheduled") got = c.value("reason", "(no reason)");
  }
  if (got == *e.scheduled_reason) return "";
  return "expected pod " + e.pod + " PodScheduled reason " + *e.scheduled_reason + ", got " + got;
}

// The events seen during the run, and those in the store at the end: "ns/name" -> (reason,
// count).
Result<std::map<std::string, std::pair<std::string, int>>> AllEvents(const Observed& ob,
                                                                     client::Client& client) {
  std::map<std::string, std::pair<std::string, int>> all = ob.events;
  ASSIGN_OR_RETURN(Json list, client.List(api::Events(), ""));
  for (const Json& ev : list.value("items", Json::array())) {
    const Json& meta = ev["metadata"];
    auto& [reason, count] = all[meta.value("namespace", "") + "/" + meta.value("name", "")];
    reason = ev.value("reason", "");
    count = std::max(count, std::max(ev.value("count", 1), 1));
  }
  return all;
}

}  // namespace

namespace internal {

std::string CheckCondition(const Expectation& e, const Judging& j) {
  auto job = client::GetJob(j.client, j.ns, j.name);
  if (!job.ok()) return "expected condition " + e.condition + ", " + job.status().ToString();
  // The job kind's state: a PyTorchJob's last True condition (the final one of a finished job,
  // else how far it got), a PyTorchTrainingJob's phase.
  const api::WorkloadState st = api::StateOf(*job->first, job->second);
  std::string got = st.state.empty() ? "no condition" : st.state;
  std::string detail = st.state.empty() ? "" : st.reason + ": " + st.message;
  if (got != e.condition) {
    return "expected condition " + e.condition + ", got " + got + " (" + detail + ")" +
           Context(j.observed, j.key);
  }
  if (!Matches(e.reason, st.reason) || !Matches(e.message, st.message)) {
    return "expected condition " + e.condition + " with reason /" + e.reason + "/ and message /" +
           e.message + "/, got (" + detail + ")" + Context(j.observed, j.key);
  }
  return "";
}

std::string CheckWorkloadCondition(const Expectation& e, const Judging& j) {
  namespace ak = api::kueue;
  const std::string what = "expected the Workload's condition " + e.condition;
  auto job = client::GetJob(j.client, j.ns, j.name);
  if (!job.ok()) return what + ", " + job.status().ToString();
  const std::string uid = api::Str(api::Field(job->second, "metadata"), "uid");
  api::ListOptions by_job;
  by_job.label_selector = std::string(ak::kJobUidLabel) + "=" + uid;
  auto list = j.client.List(ak::Workloads(), j.ns, by_job);
  if (!list.ok()) return what + ", " + list.status().ToString();
  const Json& items = api::ArrayOr(api::Field(*list, "items"));
  if (items.empty()) return what + ", but job " + j.key + " has no Workload" + Context(j.observed, j.key);
  const Json* c = ak::Condition(items[0], e.condition);
  const std::string got = c == nullptr ? "absent"
                                       : api::Str(*c, "status") + " (" + api::Str(*c, "reason") +
                                             ": " + api::Str(*c, "message") + ")";
  if (c == nullptr || api::Str(*c, "status") != "True" || !Matches(e.reason, api::Str(*c, "reason")) ||
      !Matches(e.message, api::Str(*c, "message"))) {
    return what + " True with reason /" + e.reason + "/ and message /" + e.message + "/, got " + got +
           Context(j.observed, j.key);
  }
  return "";
}

std::string CheckConditionsSeen(const Expectation& e, const Judging& j) {
  auto it = j.observed.history.find(j.key);
  std::vector<std::string> seen =
      it == j.observed.history.end() ? std::vector<std::string>{} : it->second;
  std::size_t i = 0;
  for (const auto& s : seen) {
    if (i < e.seen.size() && s == e.seen[i]) ++i;
  }
  if (i == e.seen.size()) return "";
  return "expected conditions in order [" + Join(e.seen, ", ") + "], saw [" + Join(seen, ", ") +
         "]" + Context(j.observed, j.key);
}

std::string CheckPod(const Expectation& e, const Judging& j) {
  auto pod = j.client.Get(api::Pods(), j.ns, e.pod);
  if (std::string f = CheckPodLife(e, j.observed, pod.ok()); !f.empty()) return f;
  if (!AsksPodStatus(e)) return "";
  if (!pod.ok()) return "expected pod " + e.pod + ": " + pod.status().ToString();
  const Json status = pod->value("status", Json::object());
  if (e.phase && status.value("phase", "") != *e.phase) {
    return "expected pod " + e.pod + " phase " + *e.phase + ", got " +
           status.value("phase", "(none)") + Context(j.observed, j.key);
  }
  if (std::string f = CheckPodContainers(e, j, status); !f.empty()) return f;
  return CheckPodScheduled(e, status);
}

std::string CheckEvent(const Expectation& e, const Judging& j) {
  auto all = AllEvents(j.observed, j.client);
  if (!all.ok()) return "list events: " + all.status().ToString();
  int n = 0;
  std::vector<std::string> reasons;
  for (const auto& [name, rc] : *all) {
    reasons.push_back(rc.first);
    if (rc.first == e.reason) n += rc.second;
  }
  bool ok = e.count ? n == *e.count : n >= e.min_count;
  if (ok) return "";
  return "expected " +
         (e.count ? std::to_string(*e.count) : "at least " + std::to_string(e.min_count)) +
         " event(s) " + e.reason + ", got " + std::to_string(n) +
         " (events: " + Join(reasons, ", ") + ")";
}

std::string CheckEnv(const Expectation& e, const Judging& j) {
  auto pod = j.client.Get(api::Pods(), j.ns, e.pod);
  if (!pod.ok()) return "expected env of pod " + e.pod + ": " + pod.status().ToString();
  for (const Json& c : (*pod)["spec"].value("containers", Json::array())) {
    if (!e.container.empty() && c.value("name", "") != e.container) continue;
    for (const Json& env : c.value("env", Json::array())) {
      if (env.value("name", "") != e.env_name) continue;
      std::string v = env.value("value", "");
      if (v == e.env_value) return "";
      return "expected env " + e.env_name + "=" + e.env_value + " in pod " + e.pod + ", got " + v;
    }
    return "expected env " + e.env_name + "=" + e.env_value + " in pod " + e.pod + ", not set";
  }
  return "expected env in pod " + e.pod + ": no container " + e.container;
}

std::string CheckDuration(const Expectation& e, const Judging& j) {
  const Observed& ob = j.observed;
  if (!ob.finished) {
    return "expected the jobs to finish" +
           (e.max_duration > Duration::zero() ? " within " + FormatAge(e.max_duration)
                                              : std::string()) +
           ", they had not after " + FormatAge(ob.duration);
  }
  if (e.max_duration > Duration::zero() && ob.duration > e.max_duration) {
    return "expected the jobs to finish within " + FormatAge(e.max_duration) + ", took " +
           FormatAge(ob.duration);
  }
  if (ob.duration < e.min_duration) {
    return "expected the jobs to take at least " + FormatAge(e.min_duration) + ", took " +
           FormatAge(ob.duration);
  }
  return "";
}

std::string CheckRejected(const Expectation& e, const Judging& j) {
  const Observed& ob = j.observed;
  for (std::size_t i = 0; i < ob.job_keys.size(); ++i) {
    if (!e.job.empty() && ob.job_keys[i] != j.key) continue;
    const Status& s = ob.submitted[i];
    if (s.ok()) return "expected " + ob.job_keys[i] + " to be refused, it was accepted";
    if (!Matches(e.message, s.message())) {
      return "expected the refusal to match /" + e.message + "/, got " + s.ToString();
    }
  }
  return "";
}

std::string CheckJobGone(const Expectation&, const Judging& j) {
  auto job = client::GetJob(j.client, j.ns, j.name);
  if (!job.ok() && job.status().code() == Code::kNotFound) return "";
  return "expected job " + j.key + " to be deleted, it still exists" + Context(j.observed, j.key);
}

// Each bound against the trainer's figures of the pod (the job's master unless named).
std::string CheckMetrics(const Expectation& e, const Judging& j) {
  std::string pod = e.pod;
  if (pod.empty()) {
    auto job = client::GetJob(j.client, j.ns, j.name);
    pod = job.ok() ? job->first->workload->primary_pod(job->second) : j.name + "-master-0";
  }
  auto it = j.observed.metrics.find(pod);
  if (it == j.observed.metrics.end()) {
    return "expected trainer metrics of pod " + pod + ", found none (real-time runs only)" +
           Context(j.observed, j.key);
  }
  auto figures = MetricFigures(it->second);
  for (const auto& [metric, bound] : e.metrics) {
    auto f = figures.find(metric);
    if (f == figures.end()) {
      return "expected " + metric + " " + bound + " in pod " + pod + "'s metrics, it has none" +
             Context(j.observed, j.key);
    }
    auto holds = CompareBound(bound, f->second);
    if (!holds.ok()) return "metrics: " + holds.status().message();
    if (!*holds) {
      std::ostringstream v;
      v << f->second;
      return "expected " + metric + " " + bound + " in pod " + pod + "'s metrics, got " + v.str() +
             Context(j.observed, j.key);
    }
  }
  return "";
}

std::string CheckNoProcessLeft(const Expectation&, const Judging&) { return ""; }

std::string CheckPodCount(const Expectation& e, const Judging& j) {
  api::ListOptions o;
  o.label_selector = e.selector;
  auto list = j.client.List(api::Pods(), "", o);
  if (!list.ok()) return "list pods: " + list.status().ToString();
  std::vector<std::string> names;
  for (const Json& p : list->value("items", Json::array())) {
    names.push_back(p["metadata"].value("name", "") + "(" +
                    p.value("status", Json::object()).value("phase", "") + ")");
  }
  if (static_cast<int>(names.size()) == *e.count) return "";
  return "expected " + std::to_string(*e.count) + " pod(s)" +
         (e.selector.empty() ? "" : " matching " + e.selector) + ", got " +
         std::to_string(names.size()) + " [" + Join(names, ", ") + "]";
}

}  // namespace internal

Result<bool> CompareBound(const std::string& bound, double value) {
  static const std::regex kBound(
      R"(^\s*(>=|<=|==|>|<)\s*([-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?)\s*$)");
  std::smatch m;
  if (!std::regex_match(bound, m, kBound)) {
    return Status(Code::kInvalid,
                  "bound \"" + bound + "\": expected an operator (>=, <=, >, <, ==) and a number");
  }
  const std::string op = m[1];
  const double x = std::stod(m[2]);
  if (op == ">=") return value >= x;
  if (op == "<=") return value <= x;
  if (op == ">") return value > x;
  if (op == "<") return value < x;
  return value == x;
}

std::vector<std::string> CheckProcessesLeft(const Scenario& sc, const Observed& ob) {
  std::vector<std::string> failures;
  for (const Expectation& e : sc.expect) {
    if (e.kind != K::kNoProcessLeft || !ob.stopped) continue;
    std::string where = sc.path + ":" + std::to_string(e.line) + ": ";
    if (ob.running_at_end > 0) {
      failures.push_back(where + "expected no container process running when the run ended, " +
                         std::to_string(ob.running_at_end) + " still ran" + LogTails(ob, ""));
    }
    if (!ob.survivors.empty()) {
      failures.push_back(where + "expected no process left behind, process groups " +
                         Join(ob.survivors, ", ") + " outlived the cluster");
    }
  }
  return failures;
}

std::vector<std::string> CheckExpectations(const Scenario& sc, const Observed& ob,
                                           client::Client& client) {
  std::vector<std::string> failures;
  for (const Expectation& e : sc.expect) {
    std::string key = JobKey(ob, e.job);
    auto [ns, name] = Split(key);
    const internal::Judging judging{sc, ob, client, key, ns, name};
    std::string f = internal::ExpectKindOf(e.kind).check(e, judging);
    if (!f.empty()) failures.push_back(sc.path + ":" + std::to_string(e.line) + ": " + f);
  }
  return failures;
}

}  // namespace pjemu::scenario
