#include "emulator/scenario/compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace pjemu::scenario {
namespace {

// "ns/name" -> "name".
std::string NameOf(const std::string& key) { return key.substr(key.find('/') + 1); }

// text with every occurrence of the namespace ns written "<ns>", so that the same object in
// two namespaces reads the same.
std::string WithoutNamespace(std::string text, const std::string& ns) {
  if (ns.empty()) return text;
  for (auto at = text.find(ns); at != std::string::npos; at = text.find(ns, at + 4)) {
    text.replace(at, ns.size(), "<ns>");
  }
  return text;
}

// A job's conditions in their order (type, status, reason, message) and its replicas' counts.
void SummarizeJob(const std::string& name, const Json& job, std::vector<std::string>* out) {
  const std::string ns = job["metadata"].value("namespace", "");
  const Json status = job.value("status", Json::object());
  int i = 0;
  for (const Json& c : status.value("conditions", Json::array())) {
    out->push_back("job " + name + " condition " + std::to_string(++i) + ": " +
                   c.value("type", "") + " " + c.value("status", "") + " " +
                   c.value("reason", "") + " \"" +
                   WithoutNamespace(c.value("message", ""), ns) + "\"");
  }
  const Json replicas = status.value("replicaStatuses", Json::object());
  for (const auto& [type, counts] : replicas.items()) {
    out->push_back("job " + name + " replica " + type + ": active " +
                   std::to_string(counts.value("active", 0)) + ", succeeded " +
                   std::to_string(counts.value("succeeded", 0)) + ", failed " +
                   std::to_string(counts.value("failed", 0)));
  }
}

// A pod's labels, and per container its env (valueFrom as its JSON) and restart count.
void SummarizePod(const std::string& name, const Json& pod, std::vector<std::string>* out) {
  const std::string ns = pod["metadata"].value("namespace", "");
  const Json labels = pod["metadata"].value("labels", Json::object());
  for (const auto& [key, value] : labels.items()) {
    out->push_back("pod " + name + " label " + key + "=" +
                   WithoutNamespace(value.is_string() ? value.get<std::string>() : value.dump(), ns));
  }
  for (const Json& c : pod.value("spec", Json::object()).value("containers", Json::array())) {
    const std::string prefix = "pod " + name + " container " + c.value("name", "") + " env ";
    for (const Json& e : c.value("env", Json::array())) {
      const std::string value =
          e.contains("valueFrom") ? e["valueFrom"].dump() : e.value("value", "");
      out->push_back(prefix + e.value("name", "") + "=" + WithoutNamespace(value, ns));
    }
  }
  for (const Json& cs :
       pod.value("status", Json::object()).value("containerStatuses", Json::array())) {
    out->push_back("pod " + name + " container " + cs.value("name", "") + " restarts " +
                   std::to_string(cs.value("restartCount", 0)));
  }
}

// Which expectations failed: a failure message starts with "path:LINE: ".
std::set<int> FailedLines(const Scenario& sc, const RunReport& report) {
  std::set<int> lines;
  for (const std::string& f : report.failures) {
    if (f.rfind(sc.path + ":", 0) != 0) continue;
    lines.insert(std::atoi(f.c_str() + sc.path.size() + 1));
  }
  return lines;
}

}  // namespace

std::vector<std::string> SummarizeOutcome(const Scenario& sc, const RunReport& report) {
  std::vector<std::string> out;
  const Observed& ob = report.observed;
  for (std::size_t i = 0; i < ob.job_keys.size(); ++i) {
    const std::string name = NameOf(ob.job_keys[i]);
    if (i < ob.submitted.size() && !ob.submitted[i].ok()) {
      out.push_back("job " + name + ": refused");
      continue;
    }
    auto h = ob.history.find(ob.job_keys[i]);
    out.push_back("job " + name + ": " +
                  (h == ob.history.end() || h->second.empty() ? "no condition" : h->second.back()));
    auto last = ob.last_jobs.find(ob.job_keys[i]);
    if (last != ob.last_jobs.end()) SummarizeJob(name, last->second, &out);
  }
  for (const auto& [pod, last] : ob.last_pods) SummarizePod(pod, last, &out);
  std::map<std::string, std::string> last_phase;
  for (const TimelineEvent& e : report.events.events) {
    if (e.kind == TimelineEvent::Kind::kPodPhase) last_phase[NameOf(e.object)] = e.state;
  }
  for (const auto& [pod, uids] : ob.pod_uids) {
    auto p = last_phase.find(pod);
    out.push_back("pod " + pod + ": " + (p == last_phase.end() ? "deleted" : p->second) + ", " +
                  std::to_string(uids.size()) + " uid(s)");
  }
  std::set<std::string> reasons;
  for (const auto& [key, seen] : ob.events) reasons.insert(seen.first);
  for (const std::string& r : reasons) out.push_back("event reason " + r);
  const std::set<int> failed = FailedLines(sc, report);
  for (const Expectation& e : sc.expect) {
    out.push_back("expect line " + std::to_string(e.line) + ": " +
                  (failed.count(e.line) ? "failed" : "held"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> DiffSummaries(const std::vector<std::string>& left,
                                       const std::vector<std::string>& right,
                                       const std::string& left_name,
                                       const std::string& right_name) {
  std::vector<std::string> only_left, only_right, out;
  std::set_difference(left.begin(), left.end(), right.begin(), right.end(),
                      std::back_inserter(only_left));
  std::set_difference(right.begin(), right.end(), left.begin(), left.end(),
                      std::back_inserter(only_right));
  for (const auto& l : only_left) out.push_back("- " + left_name + ": " + l);
  for (const auto& r : only_right) out.push_back("+ " + right_name + ": " + r);
  return out;
}

}  // namespace pjemu::scenario
