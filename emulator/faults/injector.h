// Injector: turns a plan of faults into EventLoop events (style G5). Each fault has a trigger
// (a time after Arm(), a job reaching a condition, or another fault having fired) and an action
// on pods picked by name or label selector: kill with a signal, exit with a code, hang
// (SIGSTOP), delete through the API, a share of API errors for a while, or a named hook the
// owner registers (e.g. "restart-controller"). Production components never see it; a run
// without the Injector is the same run without faults. Every firing is kept in log().
// Thread safety: EventLoop thread only (Add/Arm before or on it).
#pragma once

#include <csignal>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/event_loop.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"

namespace pjemu::faults {

struct PodTarget {
  std::string ns = "default";
  std::string name;            // a pod name, or
  std::string label_selector;  // pods matching it ("training.kubeflow.org/replica-type=worker")
  std::string container;       // "" = every container
};

enum class ActionKind { kKill, kExit, kHang, kDeletePod, kApiErrors, kHook, kPatchJob };
// "kill", "exit", "hang", "delete-pod", "api-errors", "hook", "patch-job".
const char* ActionName(ActionKind kind);

struct FaultAction {
  ActionKind kind = ActionKind::kKill;
  PodTarget target;          // kKill, kExit, kHang, kDeletePod
  int signal = SIGKILL;      // kKill
  int exit_code = 1;         // kExit
  ClientFaultRule api_rule;  // kApiErrors
  Duration api_duration{0};  // kApiErrors: how long the rule stays (0 = to the end)
  std::string hook;          // kHook: the name given to SetHook
  std::string job;           // kPatchJob: ns/name or name
  Json patch;                // kPatchJob: a merge patch (e.g. spec.runPolicy.suspend)
};

struct Trigger {
  enum class Kind { kAt, kJobCondition, kAfterFault };
  Kind kind = Kind::kAt;
  Duration delay{0};      // kAt: after Arm(); others: after the trigger matched
  std::string job;        // kJobCondition: ns/name or name (namespace "default")
  std::string condition;  // kJobCondition: a condition type that must be True
  std::string fault;      // kAfterFault: the id of the other fault
};

struct FaultSpec {
  std::string id;  // unique; used by kAfterFault triggers and the log
  Trigger trigger;
  FaultAction action;
};

struct FaultRecord {
  std::string id;
  Time at{};
  std::string what;  // "kill SIGKILL default/mnist-worker-0"
  Status result;
};

struct InjectorOptions {
  Duration poll_interval = 500ms;  // how often condition triggers look at their job
};

class Injector {
 public:
  Injector(EventLoop& loop, client::Client& client, InjectorOptions options = {});
  ~Injector();  // Stop()
  Injector(const Injector&) = delete;
  Injector& operator=(const Injector&) = delete;

  void SetProcessFaults(FaultyProcessRunner* runner) { processes_ = runner; }
  void SetApiFaults(FaultyClient* client) { api_ = client; }
  void SetHook(const std::string& name, std::function<Status()> hook) { hooks_[name] = hook; }

  // kInvalid naming the field: empty or duplicate id, unknown kAfterFault target, a pod action
  // without a target, an action whose seam was not set, a hook not registered.
  Status Add(FaultSpec spec);
  // Starts the clock for kAt triggers and the polling of condition triggers.
  void Arm();
  void Stop();

  const std::vector<FaultRecord>& log() const { return log_; }
  // True when every fault has fired.
  bool done() const { return fired_ == specs_.size(); }

 private:
  void Schedule(const FaultSpec& spec, Duration delay);
  void Fire(const FaultSpec& spec);
  void Poll();
  Status ActOnPods(const FaultSpec& spec, std::string* what);
  Result<std::vector<std::string>> TargetPods(const PodTarget& target);

  EventLoop& loop_;
  client::Client& client_;
  InjectorOptions options_;
  FaultyProcessRunner* processes_ = nullptr;
  FaultyClient* api_ = nullptr;
  std::map<std::string, std::function<Status()>> hooks_;
  std::vector<FaultSpec> specs_;
  std::map<std::string, bool> scheduled_;  // ids whose trigger has matched
  std::size_t fired_ = 0;
  std::vector<EventLoop::TimerId> timers_;
  std::vector<FaultRecord> log_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(false);
};

}  // namespace pjemu::faults
