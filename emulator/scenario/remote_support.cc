// The pure parts of remote runs (remote.h): which scenarios can run on a real cluster, the
// namespace each gets, moving a scenario into it, and the trainer's metrics from its log.
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "emulator/api/resources.h"
#include "emulator/scenario/remote.h"

namespace pjemu::scenario {
namespace {

using faults::ActionKind;

// Each fault action and what it needs on a real cluster ("" = it goes through the API).
const std::map<ActionKind, std::string>& ActionNeeds() {
  static const std::map<ActionKind, std::string> kNeeds = {
      {ActionKind::kDeletePod, ""},
      {ActionKind::kPatchJob, ""},
      {ActionKind::kCordon, ""},
      {ActionKind::kUncordon, ""},
      {ActionKind::kEvictPod, ""},
      {ActionKind::kDrain, ""},
      {ActionKind::kKill,
       "emulator only: a signal from the node (through pods/exec the main process is PID 1, "
       "which ignores SIGKILL)"},
      {ActionKind::kHang,
       "emulator only: SIGSTOP from the node (through pods/exec the main process is PID 1, "
       "which ignores SIGSTOP)"},
      {ActionKind::kExit, "emulator only: a scripted exit code"},
      {ActionKind::kOom, "emulator only: a scripted OOM kill"},
      {ActionKind::kEvict, "emulator only: the kubelet's node-pressure eviction"},
      {ActionKind::kNodeDown, "emulator only: node power"},
      {ActionKind::kNodeUp, "emulator only: node power"},
      {ActionKind::kPullDelay, "emulator only: image pull delay"},
      {ActionKind::kApiErrors, "emulator only: API error rates"},
      {ActionKind::kHook, "emulator only: restarting the emulator's controller"},
  };
  return kNeeds;
}

std::string FaultReason(const faults::FaultSpec& f) {
  auto it = ActionNeeds().find(f.action.kind);
  std::string need = it == ActionNeeds().end() ? "emulator only" : it->second;
  if (!need.empty()) {
    return need + ": " + faults::ActionName(f.action.kind) + " (fault " + f.id + ")";
  }
  if (f.trigger.kind == faults::Trigger::Kind::kMetrics && f.trigger.step > 0) {
    return "emulator only: when.metrics.step, the trainer's metrics file (fault " + f.id + ")";
  }
  return "";
}

std::string ExpectReason(const Expectation& e) {
  if (e.kind == Expectation::Kind::kMetrics && e.metrics.count("steps")) {
    return "emulator only: metrics.steps, the trainer's metrics file (line " +
           std::to_string(e.line) + ")";
  }
  return "";
}

// "ns/name" or "name" -> "<ns>/name".
std::string MoveKey(const std::string& key, const std::string& ns) {
  if (key.empty()) return key;
  auto slash = key.find('/');
  return ns + "/" + (slash == std::string::npos ? key : key.substr(slash + 1));
}

std::string NamespaceOfKey(const std::string& key) {
  auto slash = key.find('/');
  return slash == std::string::npos ? "default" : key.substr(0, slash);
}

}  // namespace

RemoteSupport ClassifyRemote(const Scenario& sc) {
  auto no = [](std::string reason) { return RemoteSupport{false, std::move(reason)}; };
  if (sc.options.virtual_time) return no("emulator only: virtual time (options.time: virtual)");
  if (!sc.processes.empty()) return no("emulator only: scripted processes (processes:)");
  for (const faults::FaultSpec& f : sc.faults) {
    if (std::string r = FaultReason(f); !r.empty()) return no(r);
  }
  for (const Expectation& e : sc.expect) {
    if (std::string r = ExpectReason(e); !r.empty()) return no(r);
  }
  return {};
}

std::string RemoteNamespace(const std::string& prefix, const std::string& path,
                            std::uint64_t suffix) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string label;
  for (char c : stem) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      label += l;
    } else if (!label.empty() && label.back() != '-') {
      label += '-';
    }
  }
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string tail;
  for (int i = 0; i < 5; ++i, suffix /= 36) tail.insert(tail.begin(), kDigits[suffix % 36]);
  const std::size_t fixed = prefix.size() + 2 + tail.size();
  const std::size_t room = fixed < 63 ? 63 - fixed : 0;
  if (label.size() > room) label.resize(room);
  while (!label.empty() && label.back() == '-') label.pop_back();
  return prefix + "-" + (label.empty() ? "" : label + "-") + tail;
}

Result<Scenario> InNamespace(const Scenario& sc, const std::string& ns) {
  std::set<std::string> used;
  Scenario out = sc;
  for (JobSource& j : out.jobs) {
    if (!j.fixture.empty()) continue;  // loaded later; the runner moves its objects
    used.insert(j.inline_object.value("metadata", Json::object()).value("namespace", "default"));
    j.inline_object["metadata"]["namespace"] = ns;
  }
  for (Json& o : out.objects) {
    const api::ResourceType* type = api::FindByKind(o.value("apiVersion", ""), o.value("kind", ""));
    if (type == nullptr || !type->namespaced) continue;
    used.insert(o.value("metadata", Json::object()).value("namespace", "default"));
    o["metadata"]["namespace"] = ns;
  }
  for (Expectation& e : out.expect) {
    if (!e.job.empty()) used.insert(NamespaceOfKey(e.job));
    e.job = MoveKey(e.job, ns);
  }
  for (faults::FaultSpec& f : out.faults) {
    faults::Trigger& t = f.trigger;
    if (!t.job.empty()) used.insert(NamespaceOfKey(t.job));
    t.job = MoveKey(t.job, ns);
    if (!t.pod.name.empty()) used.insert(t.pod.ns);
    t.pod.ns = ns;
    if (!f.action.job.empty()) used.insert(NamespaceOfKey(f.action.job));
    f.action.job = MoveKey(f.action.job, ns);
    if (!f.action.target.name.empty() || !f.action.target.label_selector.empty()) {
      used.insert(f.action.target.ns);
    }
    f.action.target.ns = ns;
  }
  if (used.size() > 1) {
    std::string names;
    for (const auto& n : used) names += " " + n;
    return Status(Code::kInvalid, sc.path + ": names more than one namespace (" +
                                      names.substr(1) + "); a remote run has one");
  }
  return out;
}

std::string MetricsFromLog(const std::string& log) {
  static const std::regex kEpoch(
      R"(\{metricName: accuracy, metricValue: ([0-9.eE+-]+)\};\{metricName: loss, )"
      R"(metricValue: ([0-9.eE+-]+)\})");
  static const std::regex kStep(R"(^Train Epoch: ([0-9]+) \[.*\]\s*loss=([0-9.eE+-]+))");
  std::istringstream in(log);
  std::string line, out;
  int epoch = 0;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kEpoch)) {
      Json rec = {{"type", "epoch"},
                  {"epoch", ++epoch},
                  {"accuracy", std::stod(m[1].str())},
                  {"test_loss", std::stod(m[2].str())}};
      out += rec.dump() + "\n";
    } else if (std::regex_search(line, m, kStep)) {
      Json rec = {{"type", "step"}, {"epoch", std::stoi(m[1].str())}, {"loss", std::stod(m[2].str())}};
      out += rec.dump() + "\n";
    }
  }
  return out;
}

}  // namespace pjemu::scenario
