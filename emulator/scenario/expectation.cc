#include "emulator/scenario/expectation.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>

namespace pjemu::scenario {

namespace {

using K = Expectation::Kind;

std::string Join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool Matches(const std::string& pattern, const std::string& text) {
  if (pattern.empty()) return true;
  try {
    return std::regex_search(text, std::regex(pattern));
  } catch (const std::regex_error&) {
    return text.find(pattern) != std::string::npos;
  }
}

std::string JobKey(const Scenario& sc, const Observed& ob, const std::string& job) {
  if (job.empty()) return ob.job_keys.empty() ? "" : ob.job_keys.front();
  if (job.find('/') != std::string::npos) return job;
  (void)sc;
  return "default/" + job;
}

std::pair<std::string, std::string> Split(const std::string& key) {
  auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// The last condition that is True (a finished job: Succeeded or Failed).
// (A copy: the conditions are read from a temporary.)
std::optional<Json> FinalCondition(const Json& job) {
  std::optional<Json> last;
  for (const Json& c : job.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("status", "") == "True") last = c;
  }
  return last;
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
  out += "\n    conditions seen: " + (it == ob.history.end() ? "(none)" : Join(it->second));
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

std::string CheckOne(const Expectation& e, const Scenario& sc, const Observed& ob,
                     client::Client& client) {
  std::string key = JobKey(sc, ob, e.job);
  auto [ns, name] = Split(key);
  switch (e.kind) {
    case K::kCondition: {
      auto job = client.Get(api::PyTorchJobs(), ns, name);
      if (!job.ok()) return "expected condition " + e.condition + ", " + job.status().ToString();
      const std::optional<Json> c = FinalCondition(*job);
      std::string got = c ? c->value("type", "") : "no condition";
      std::string detail = c ? c->value("reason", "") + ": " + c->value("message", "") : "";
      if (got != e.condition) {
        return "expected condition " + e.condition + ", got " + got + " (" + detail + ")" +
               Context(ob, key);
      }
      if (!Matches(e.reason, c->value("reason", "")) ||
          !Matches(e.message, c->value("message", ""))) {
        return "expected condition " + e.condition + " with reason /" + e.reason +
               "/ and message /" + e.message + "/, got (" + detail + ")" + Context(ob, key);
      }
      return "";
    }
    case K::kConditionsSeen: {
      auto it = ob.history.find(key);
      std::vector<std::string> seen =
          it == ob.history.end() ? std::vector<std::string>{} : it->second;
      std::size_t i = 0;
      for (const auto& s : seen) {
        if (i < e.seen.size() && s == e.seen[i]) ++i;
      }
      if (i == e.seen.size()) return "";
      return "expected conditions in order [" + Join(e.seen) + "], saw [" + Join(seen) + "]" +
             Context(ob, key);
    }
    case K::kPod: {
      auto pod = client.Get(api::Pods(), ns, e.pod);
      if (e.exists.has_value() && *e.exists != pod.ok()) {
        return "expected pod " + e.pod + (*e.exists ? " to exist" : " to be gone") + ", it " +
               (pod.ok() ? "exists" : "does not exist");
      }
      auto uids = ob.pod_uids.find(e.pod);
      int created = uids == ob.pod_uids.end() ? 0 : static_cast<int>(uids->second.size());
      if (e.recreations && std::max(created - 1, 0) != *e.recreations) {
        return "expected pod " + e.pod + " re-created " + std::to_string(*e.recreations) +
               " times, it was re-created " + std::to_string(std::max(created - 1, 0)) + " times";
      }
      if (!e.phase && !e.restarts && e.restarts_bound.empty() && !e.scheduled_reason &&
          !e.waiting_reason && !e.terminated_reason) {
        return "";
      }
      if (!pod.ok()) return "expected pod " + e.pod + ": " + pod.status().ToString();
      const Json status = pod->value("status", Json::object());
      if (e.phase && status.value("phase", "") != *e.phase) {
        return "expected pod " + e.pod + " phase " + *e.phase + ", got " +
               status.value("phase", "(none)") + Context(ob, key);
      }
      int restarts = 0;
      std::string waiting;
      std::vector<std::string> terminated;
      for (const Json& cs : status.value("containerStatuses", Json::array())) {
        restarts += cs.value("restartCount", 0);
        const Json st = cs.value("state", Json::object());
        if (st.contains("waiting")) waiting = st["waiting"].value("reason", "");
        for (const char* which : {"state", "lastState"}) {
          const Json t = cs.value(which, Json::object()).value("terminated", Json::object());
          if (t.contains("reason")) terminated.push_back(t.value("reason", ""));
        }
      }
      if (e.terminated_reason && std::find(terminated.begin(), terminated.end(),
                                           *e.terminated_reason) == terminated.end()) {
        return "expected pod " + e.pod + " to have a container terminated " + *e.terminated_reason +
               ", got [" + Join(terminated) + "]" + Context(ob, key);
      }
      if (e.restarts && restarts != *e.restarts) {
        return "expected pod " + e.pod + " restarts " + std::to_string(*e.restarts) + ", got " +
               std::to_string(restarts) + Context(ob, key);
      }
      if (auto held = CompareBound(e.restarts_bound, restarts);
          !e.restarts_bound.empty() && !(held.ok() && *held)) {
        return "expected pod " + e.pod + " restarts " + e.restarts_bound + ", got " +
               std::to_string(restarts) + Context(ob, key);
      }
      if (e.waiting_reason && waiting != *e.waiting_reason) {
        return "expected pod " + e.pod + " waiting reason " + *e.waiting_reason + ", got " +
               (waiting.empty() ? "(not waiting)" : waiting);
      }
      if (e.scheduled_reason) {
        std::string got = "(no PodScheduled condition)";
        for (const Json& c : status.value("conditions", Json::array())) {
          if (c.value("type", "") == "PodScheduled") got = c.value("reason", "(no reason)");
        }
        if (got != *e.scheduled_reason) {
          return "expected pod " + e.pod + " PodScheduled reason " + *e.scheduled_reason +
                 ", got " + got;
        }
      }
      return "";
    }
    case K::kEvent: {
      // The events seen during the run, and those in the store at the end.
      std::map<std::string, std::pair<std::string, int>> all = ob.events;
      auto list = client.List(api::Events(), "");
      if (!list.ok()) return "list events: " + list.status().ToString();
      for (const Json& ev : list->value("items", Json::array())) {
        const Json& meta = ev["metadata"];
        auto& [reason, count] = all[meta.value("namespace", "") + "/" + meta.value("name", "")];
        reason = ev.value("reason", "");
        count = std::max(count, std::max(ev.value("count", 1), 1));
      }
      int n = 0;
      std::vector<std::string> reasons;
      for (const auto& [name, rc] : all) {
        reasons.push_back(rc.first);
        if (rc.first == e.reason) n += rc.second;
      }
      bool ok = e.count ? n == *e.count : n >= e.min_count;
      if (ok) return "";
      return "expected " +
             (e.count ? std::to_string(*e.count) : "at least " + std::to_string(e.min_count)) +
             " event(s) " + e.reason + ", got " + std::to_string(n) + " (events: " + Join(reasons) +
             ")";
    }
    case K::kEnv: {
      auto pod = client.Get(api::Pods(), ns, e.pod);
      if (!pod.ok()) return "expected env of pod " + e.pod + ": " + pod.status().ToString();
      for (const Json& c : (*pod)["spec"].value("containers", Json::array())) {
        if (!e.container.empty() && c.value("name", "") != e.container) continue;
        for (const Json& env : c.value("env", Json::array())) {
          if (env.value("name", "") != e.env_name) continue;
          std::string v = env.value("value", "");
          if (v == e.env_value) return "";
          return "expected env " + e.env_name + "=" + e.env_value + " in pod " + e.pod + ", got " +
                 v;
        }
        return "expected env " + e.env_name + "=" + e.env_value + " in pod " + e.pod + ", not set";
      }
      return "expected env in pod " + e.pod + ": no container " + e.container;
    }
    case K::kDuration:
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
    case K::kRejected: {
      for (std::size_t i = 0; i < ob.job_keys.size(); ++i) {
        if (!e.job.empty() && ob.job_keys[i] != key) continue;
        const Status& s = ob.submitted[i];
        if (s.ok()) return "expected " + ob.job_keys[i] + " to be refused, it was accepted";
        if (!Matches(e.message, s.message())) {
          return "expected the refusal to match /" + e.message + "/, got " + s.ToString();
        }
      }
      return "";
    }
    case K::kJobGone: {
      auto job = client.Get(api::PyTorchJobs(), ns, name);
      if (!job.ok() && job.status().code() == Code::kNotFound) return "";
      return "expected job " + key + " to be deleted, it still exists" + Context(ob, key);
    }
    case K::kMetrics: {
      std::string pod = e.pod.empty() ? name + "-master-0" : e.pod;
      auto it = ob.metrics.find(pod);
      if (it == ob.metrics.end()) {
        return "expected trainer metrics of pod " + pod + ", found none (real-time runs only)" +
               Context(ob, key);
      }
      auto figures = MetricFigures(it->second);
      for (const auto& [metric, bound] : e.metrics) {
        auto f = figures.find(metric);
        if (f == figures.end()) {
          return "expected " + metric + " " + bound + " in pod " + pod + "'s metrics, it has none" +
                 Context(ob, key);
        }
        auto holds = CompareBound(bound, f->second);
        if (!holds.ok()) return "metrics: " + holds.status().message();
        if (!*holds) {
          std::ostringstream v;
          v << f->second;
          return "expected " + metric + " " + bound + " in pod " + pod + "'s metrics, got " +
                 v.str() + Context(ob, key);
        }
      }
      return "";
    }
    case K::kNoProcessLeft:
      return "";  // CheckProcessesLeft, once the cluster stopped
    case K::kPodCount: {
      api::ListOptions o;
      o.label_selector = e.selector;
      auto list = client.List(api::Pods(), "", o);
      if (!list.ok()) return "list pods: " + list.status().ToString();
      std::vector<std::string> names;
      for (const Json& p : list->value("items", Json::array())) {
        names.push_back(p["metadata"].value("name", "") + "(" +
                        p.value("status", Json::object()).value("phase", "") + ")");
      }
      if (static_cast<int>(names.size()) == *e.count) return "";
      return "expected " + std::to_string(*e.count) + " pod(s)" +
             (e.selector.empty() ? "" : " matching " + e.selector) + ", got " +
             std::to_string(names.size()) + " [" + Join(names) + "]";
    }
  }
  return "";
}

}  // namespace

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
                         Join(ob.survivors) + " outlived the cluster");
    }
  }
  return failures;
}

std::vector<std::string> CheckExpectations(const Scenario& sc, const Observed& ob,
                                           client::Client& client) {
  std::vector<std::string> failures;
  for (const Expectation& e : sc.expect) {
    std::string f = CheckOne(e, sc, ob, client);
    if (!f.empty()) failures.push_back(sc.path + ":" + std::to_string(e.line) + ": " + f);
  }
  return failures;
}

}  // namespace pjemu::scenario
