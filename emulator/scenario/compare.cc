#include "emulator/scenario/compare.h"

#include <algorithm>
#include <map>
#include <set>

namespace pjemu::scenario {
namespace {

// "ns/name" -> "name".
std::string NameOf(const std::string& key) { return key.substr(key.find('/') + 1); }

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
  }
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
