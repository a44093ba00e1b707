#include "emulator/faults/injector.h"

#include <algorithm>
#include <cstring>
#include <regex>
#include <sstream>

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/client/workloads.h"

namespace pjemu::faults {

namespace {

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {"default", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

bool IsPodAction(ActionKind kind) {
  return kind == ActionKind::kKill || kind == ActionKind::kExit || kind == ActionKind::kHang ||
         kind == ActionKind::kDeletePod || kind == ActionKind::kEvict || kind == ActionKind::kOom ||
         kind == ActionKind::kEvictPod;
}

// The text of a CRI log line ("<time> <stream> <F|P> <text>"); other lines as they are.
std::string CriText(const std::string& line) {
  std::size_t a = line.find(' ');
  std::size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
  std::size_t c = b == std::string::npos ? b : line.find(' ', b + 1);
  if (c == std::string::npos) return line;
  return line.substr(c + 1);
}

bool LogMatches(const std::string& log, const std::string& pattern) {
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error&) {
    return false;
  }
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (std::regex_search(CriText(line), re)) return true;
  }
  return false;
}

// A metrics record of the trainer's JSON-lines file that reaches the trigger's step or epoch.
bool MetricsReached(const std::string& text, const Trigger& t) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    Json rec = Json::parse(line, nullptr, false);
    if (!rec.is_object()) continue;  // a line being written
    std::string type = rec.value("type", "");
    if (t.step > 0 && type == "step" && rec.value("step", std::int64_t{0}) >= t.step) return true;
    if (t.epoch > 0 && type == "epoch" && rec.value("epoch", std::int64_t{0}) >= t.epoch) {
      return true;
    }
  }
  return false;
}

}  // namespace

const char* ActionName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kKill:
      return "kill";
    case ActionKind::kExit:
      return "exit";
    case ActionKind::kHang:
      return "hang";
    case ActionKind::kDeletePod:
      return "delete-pod";
    case ActionKind::kApiErrors:
      return "api-errors";
    case ActionKind::kHook:
      return "hook";
    case ActionKind::kPatchJob:
      return "patch-job";
    case ActionKind::kEvict:
      return "evict";
    case ActionKind::kOom:
      return "oom";
    case ActionKind::kNodeDown:
      return "node-down";
    case ActionKind::kNodeUp:
      return "node-up";
    case ActionKind::kPullDelay:
      return "pull-delay";
    case ActionKind::kCordon:
      return "cordon";
    case ActionKind::kUncordon:
      return "uncordon";
    case ActionKind::kEvictPod:
      return "evict-pod";
    case ActionKind::kDrain:
      return "drain";
  }
  return "?";
}

Injector::Injector(EventLoop& loop, client::Client& client, InjectorOptions options)
    : loop_(loop), client_(client), options_(options), random_(options.seed) {}

Injector::~Injector() { Stop(); }

Status Injector::Add(FaultSpec spec) {
  if (spec.id.empty()) return Status(Code::kInvalid, "id: a fault needs an id");
  for (const FaultSpec& s : specs_) {
    if (s.id == spec.id)
      return Status(Code::kInvalid, "id: duplicate fault id \"" + spec.id + "\"");
  }
  const FaultAction& a = spec.action;
  if (IsPodAction(a.kind) && a.target.name.empty() && a.target.label_selector.empty()) {
    return Status(Code::kInvalid, "pod: fault \"" + spec.id + "\" needs a pod name or selector");
  }
  if ((a.kind == ActionKind::kKill || a.kind == ActionKind::kExit || a.kind == ActionKind::kHang ||
       a.kind == ActionKind::kOom) &&
      processes_ == nullptr) {
    return Status(Code::kInvalid,
                  std::string(ActionName(a.kind)) + ": no process runner to act on (not wrapped)");
  }
  if (a.kind == ActionKind::kApiErrors) {
    if (api_ == nullptr) return Status(Code::kInvalid, "api-errors: no client to act on");
    RETURN_IF_ERROR(ValidateRule(a.api_rule).WithContext("api-errors"));
  }
  if (a.kind == ActionKind::kPatchJob && (a.job.empty() || !a.patch.is_object())) {
    return Status(Code::kInvalid, "patch-job: needs a job and a patch object");
  }
  if (a.kind == ActionKind::kHook && !hooks_.count(a.hook)) {
    return Status(Code::kInvalid, "hook: unknown action \"" + a.hook + "\"");
  }
  if (a.kind == ActionKind::kEvict && !node_.evict) {
    return Status(Code::kInvalid, "evict: no kubelet to act on");
  }
  if ((a.kind == ActionKind::kNodeDown || a.kind == ActionKind::kNodeUp) &&
      (!node_.power || a.node.empty())) {
    return Status(Code::kInvalid, std::string(ActionName(a.kind)) + ": no node to act on");
  }
  if (a.kind == ActionKind::kDrain && a.timeout <= Duration::zero()) {
    return Status(Code::kInvalid, "timeout: drain needs a positive timeout");
  }
  if (a.kind == ActionKind::kPullDelay && (!node_.pull_delay || a.image.empty())) {
    return Status(Code::kInvalid, "pull-delay: needs an image glob and a kubelet to act on");
  }
  const Trigger& t = spec.trigger;
  if (t.kind == Trigger::Kind::kLogMatch) {
    if (!node_.read_log) return Status(Code::kInvalid, "when.log: no pod logs to read");
    if (t.pod.name.empty()) return Status(Code::kInvalid, "when.pod: a log trigger needs a pod");
    try {
      std::regex re(t.regex);
    } catch (const std::regex_error& e) {
      return Status(Code::kInvalid, "when.log: invalid regex \"" + t.regex + "\": " + e.what());
    }
  }
  if (t.kind == Trigger::Kind::kMetrics) {
    if (!node_.read_metrics) {
      return Status(Code::kInvalid,
                    "when.metrics: no trainer metrics in this run (real time only)");
    }
    if (t.pod.name.empty() || (t.step <= 0 && t.epoch <= 0)) {
      return Status(Code::kInvalid, "when.metrics: needs a pod and a step or epoch above 0");
    }
  }
  if (t.kind == Trigger::Kind::kAfterFault) {
    bool known = false;
    for (const FaultSpec& s : specs_) known = known || s.id == t.fault;
    if (!known) {
      return Status(Code::kInvalid, "after: no earlier fault with id \"" + t.fault + "\"");
    }
  }
  if (t.kind == Trigger::Kind::kJobCondition && (t.job.empty() || t.condition.empty())) {
    return Status(Code::kInvalid, "when: a condition trigger needs a job and a condition");
  }
  specs_.push_back(std::move(spec));
  return Status::Ok();
}

void Injector::Arm() {
  *alive_ = true;
  for (const FaultSpec& spec : specs_) {
    if (spec.trigger.kind == Trigger::Kind::kAt) Schedule(spec, spec.trigger.delay);
  }
  Poll();
}

void Injector::Stop() {
  *alive_ = false;
  for (auto id : timers_) loop_.Cancel(id);
  timers_.clear();
  for (auto& [node, ids] : node_timers_) {
    for (auto id : ids) loop_.Cancel(id);
  }
  node_timers_.clear();
}

void Injector::Schedule(const FaultSpec& spec, Duration delay) {
  scheduled_[spec.id] = true;
  if (spec.trigger.jitter > Duration::zero()) {
    auto n = std::chrono::duration_cast<std::chrono::milliseconds>(spec.trigger.jitter).count();
    delay += std::chrono::milliseconds(random_.Uniform(static_cast<std::uint64_t>(n)));
  }
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = &spec - specs_.data();
  auto fire = [this, alive, index] {
    if (auto a = alive.lock(); a && *a) Fire(specs_[index]);
  };
  // No delay: queued like any posted task (in posting order), not as a timer due now, which
  // would run after every task posted meanwhile (`at: 0s` must beat what the submit sets off).
  timers_.push_back(delay > Duration::zero() ? loop_.PostAfter(delay, fire) : loop_.Post(fire));
}

bool Injector::TriggerMatched(const Trigger& t) {
  switch (t.kind) {
    case Trigger::Kind::kJobCondition: {
      auto [ns, name] = SplitKey(t.job);
      auto job = client::GetJob(client_, ns, name);
      return job.ok() && api::HasCondition(api::Field(job->second, "status"), t.condition);
    }
    case Trigger::Kind::kLogMatch:
      return LogMatches(node_.read_log(t.pod.ns, t.pod.name, t.pod.container), t.regex);
    case Trigger::Kind::kMetrics:
      return MetricsReached(node_.read_metrics(t.pod.ns, t.pod.name), t);
    default:
      return false;
  }
}

void Injector::Poll() {
  bool waiting = false;
  for (const FaultSpec& spec : specs_) {
    const Trigger::Kind kind = spec.trigger.kind;
    if (kind == Trigger::Kind::kAt || kind == Trigger::Kind::kAfterFault ||
        scheduled_.count(spec.id)) {
      continue;
    }
    if (TriggerMatched(spec.trigger)) {
      Schedule(spec, spec.trigger.delay);
    } else {
      waiting = true;
    }
  }
  if (!waiting) return;
  std::weak_ptr<bool> alive = alive_;
  timers_.push_back(loop_.PostAfter(options_.poll_interval, [this, alive] {
    if (auto a = alive.lock(); a && *a) Poll();
  }));
}

Result<std::vector<std::string>> Injector::TargetPods(const PodTarget& target) {
  if (!target.name.empty()) return std::vector<std::string>{target.name};
  api::ListOptions options;
  options.label_selector = target.label_selector;
  ASSIGN_OR_RETURN(Json list, client_.List(api::Pods(), target.ns, options));
  std::vector<std::string> names;
  for (const Json& pod : list.value("items", Json::array())) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    names.push_back(pod["metadata"].value("name", ""));
  }
  if (names.empty()) {
    return Status(Code::kNotFound, "no pod matches \"" + target.label_selector + "\"");
  }
  std::sort(names.begin(), names.end());  // the list order must not decide a seeded pick
  return names;
}

Status Injector::ActOnPods(const FaultSpec& spec, std::string* what) {
  const FaultAction& a = spec.action;
  ASSIGN_OR_RETURN(std::vector<std::string> pods, TargetPods(a.target));
  if (a.pick_random && pods.size() > 1) {
    pods = {pods[random_.Uniform(pods.size())]};
  }
  Status first;
  for (const std::string& pod : pods) {
    Status s;
    *what += " " + a.target.ns + "/" + pod;
    switch (a.kind) {
      case ActionKind::kKill:
        s = processes_->Kill(a.target.ns, pod, a.signal, a.target.container);
        break;
      case ActionKind::kExit:
        s = processes_->ExitWith(a.target.ns, pod, a.exit_code, a.target.container);
        break;
      case ActionKind::kHang:
        s = processes_->Hang(a.target.ns, pod, a.target.container);
        break;
      case ActionKind::kDeletePod:
        s = client_.Delete(api::Pods(), a.target.ns, pod).status();
        break;
      case ActionKind::kEvictPod:
        s = client_.Evict(a.target.ns, pod);
        break;
      case ActionKind::kEvict:
        s = node_.evict(a.target.ns, pod, a.message);
        break;
      case ActionKind::kOom:
        s = processes_->OomKill(a.target.ns, pod, a.target.container);
        break;
      default:
        break;
    }
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

void Injector::Fire(const FaultSpec& spec) {
  FaultRecord record{spec.id, loop_.Now(), ActionName(spec.action.kind), Status::Ok()};
  const FaultAction& a = spec.action;
  switch (a.kind) {
    case ActionKind::kKill:
      record.what += std::string(" SIG") + sigabbrev_np(a.signal);
      record.result = ActOnPods(spec, &record.what);
      break;
    case ActionKind::kExit:
      record.what += " code " + std::to_string(a.exit_code);
      record.result = ActOnPods(spec, &record.what);
      break;
    case ActionKind::kHang:
    case ActionKind::kDeletePod:
    case ActionKind::kEvict:
    case ActionKind::kOom:
    case ActionKind::kEvictPod:
      record.result = ActOnPods(spec, &record.what);
      break;
    case ActionKind::kDrain:
      StartDrain(spec, std::move(record));
      return;  // DrainStep finishes it
    case ActionKind::kNodeDown:
      record.what += " " + a.node;
      record.result = node_.power(a.node, false);
      if (record.result.ok()) NodeDown(spec);
      break;
    case ActionKind::kNodeUp:
      record.what += " " + a.node;
      for (auto id : node_timers_[a.node]) loop_.Cancel(id);
      node_timers_.erase(a.node);
      record.result = node_.power(a.node, true);
      break;
    case ActionKind::kCordon:
    case ActionKind::kUncordon: {
      auto node = NodeOf(a.node);
      record.result = node.status();
      if (!node.ok()) break;
      record.what += " " + *node;
      Json patch = {{"spec", {{"unschedulable", a.kind == ActionKind::kCordon}}}};
      record.result =
          client_.Patch(api::Nodes(), "", *node, api::PatchType::kMerge, patch).status();
      break;
    }
    case ActionKind::kPullDelay:
      record.what += " " + a.image + " " + FormatAge(a.pull_delay);
      node_.pull_delay(a.image, a.pull_delay);
      break;
    case ActionKind::kApiErrors: {
      auto id = api_->AddRule(a.api_rule);
      record.what += " " + a.api_rule.verb + " " + a.api_rule.resource;
      record.result = id.status();
      if (id.ok() && a.api_duration > Duration::zero()) {
        FaultyClient* api = api_;
        int rule = *id;
        timers_.push_back(loop_.PostAfter(a.api_duration, [api, rule] { api->RemoveRule(rule); }));
      }
      break;
    }
    case ActionKind::kHook:
      record.what += " " + a.hook;
      record.result = hooks_[a.hook]();
      break;
    case ActionKind::kPatchJob: {
      auto [ns, name] = SplitKey(a.job);
      record.what += " " + ns + "/" + name + " " + a.patch.dump();
      auto job = client::GetJob(client_, ns, name);
      record.result =
          job.ok() ? client_.Patch(*job->first, ns, name, api::PatchType::kMerge, a.patch).status()
                   : job.status();
      break;
    }
  }
  Finish(spec, std::move(record));
}

void Injector::Finish(const FaultSpec& spec, FaultRecord record) {
  log_.push_back(std::move(record));
  ++fired_;
  for (const FaultSpec& other : specs_) {
    if (other.trigger.kind == Trigger::Kind::kAfterFault && other.trigger.fault == spec.id &&
        !scheduled_.count(other.id)) {
      Schedule(other, other.trigger.delay);
    }
  }
}

void Injector::NodeDown(const FaultSpec& spec) {
  const FaultAction& a = spec.action;
  std::weak_ptr<bool> alive = alive_;
  const std::string node = a.node;
  const std::string id = spec.id;
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += " " + s;
    return out;
  };
  auto& timers = node_timers_[node];
  timers.push_back(loop_.PostAfter(a.node_timing.grace, [this, alive, node, id, join] {
    if (auto live = alive.lock(); !live || !*live) return;
    auto marked = MarkNodeUnreachable(client_, node, loop_.Now());
    log_.push_back({id, loop_.Now(),
                    "node-lifecycle " + node +
                        " NotReady (Unknown), pods not ready:" + (marked.ok() ? join(*marked) : ""),
                    marked.status()});
  }));
  if (a.node_timing.eviction <= Duration::zero()) return;
  timers.push_back(
      loop_.PostAfter(a.node_timing.grace + a.node_timing.eviction, [this, alive, node, id, join] {
        if (auto live = alive.lock(); !live || !*live) return;
        auto evicted = EvictPodsOfLostNode(client_, node, loop_.Now());
        log_.push_back({id, loop_.Now(),
                        "node-lifecycle " + node + " pods evicted and garbage-collected:" +
                            (evicted.ok() ? join(*evicted) : ""),
                        evicted.status()});
      }));
}

}  // namespace pjemu::faults
