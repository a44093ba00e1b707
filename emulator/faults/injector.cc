#include "emulator/faults/injector.h"

#include <cstring>

namespace pjemu::faults {

namespace {

bool ConditionTrue(const Json& job, const std::string& type) {
  const Json& conds = job.value("status", Json::object()).value("conditions", Json::array());
  for (const Json& c : conds) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  }
  return false;
}

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {"default", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

bool IsPodAction(ActionKind kind) {
  return kind == ActionKind::kKill || kind == ActionKind::kExit || kind == ActionKind::kHang ||
         kind == ActionKind::kDeletePod;
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
  }
  return "?";
}

Injector::Injector(EventLoop& loop, client::Client& client, InjectorOptions options)
    : loop_(loop), client_(client), options_(options) {}

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
  if ((a.kind == ActionKind::kKill || a.kind == ActionKind::kExit || a.kind == ActionKind::kHang) &&
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
  const Trigger& t = spec.trigger;
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
}

void Injector::Schedule(const FaultSpec& spec, Duration delay) {
  scheduled_[spec.id] = true;
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = &spec - specs_.data();
  timers_.push_back(loop_.PostAfter(delay, [this, alive, index] {
    if (auto a = alive.lock(); a && *a) Fire(specs_[index]);
  }));
}

void Injector::Poll() {
  bool waiting = false;
  for (const FaultSpec& spec : specs_) {
    if (spec.trigger.kind != Trigger::Kind::kJobCondition || scheduled_.count(spec.id)) continue;
    auto [ns, name] = SplitKey(spec.trigger.job);
    auto job = client_.Get(api::PyTorchJobs(), ns, name);
    if (job.ok() && ConditionTrue(*job, spec.trigger.condition)) {
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
  return names;
}

Status Injector::ActOnPods(const FaultSpec& spec, std::string* what) {
  const FaultAction& a = spec.action;
  ASSIGN_OR_RETURN(std::vector<std::string> pods, TargetPods(a.target));
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
      record.result = ActOnPods(spec, &record.what);
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
      record.result =
          client_.Patch(api::PyTorchJobs(), ns, name, api::PatchType::kMerge, a.patch).status();
      break;
    }
  }
  log_.push_back(record);
  ++fired_;
  for (const FaultSpec& other : specs_) {
    if (other.trigger.kind == Trigger::Kind::kAfterFault && other.trigger.fault == spec.id &&
        !scheduled_.count(other.id)) {
      Schedule(other, other.trigger.delay);
    }
  }
}

}  // namespace pjemu::faults
