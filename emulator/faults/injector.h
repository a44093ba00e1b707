// Injector: turns a plan of faults into EventLoop events. Each fault has a trigger
// (a time after Arm(), a job reaching a condition, or another fault having fired) and an action
// on pods picked by name or label selector: kill with a signal, exit with a code, hang
// (SIGSTOP), delete through the API, a share of API errors for a while, or a named hook the
// owner registers (e.g. "restart-controller"); node faults (evict, node down/up with the node
// lifecycle controller's steps, image pull delays, OOM) go through NodeSeams; API-initiated
// eviction (evict-pod) and drain go through Client::Evict, a drain's refused evictions retried
// every second on the loop until its timeout, its log entry written when it ends. Triggers may
// also wait for a pod's log line or the trainer's metrics. Production components never see it; a
// run without the Injector is the same run without faults. Every firing is kept in log(). Thread
// safety: EventLoop thread only (Add/Arm before or on it).
#pragma once

#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/event_loop.h"
#include "emulator/common/random.h"
#include "emulator/faults/faulty_client.h"
#include "emulator/faults/faulty_process_runner.h"
#include "emulator/faults/node_lifecycle.h"

namespace pjemu::faults {

struct PodTarget {
  std::string ns = "default";
  std::string name;            // a pod name, or
  std::string label_selector;  // pods matching it ("training.kubeflow.org/replica-type=worker")
  std::string container;       // "" = every container
};

enum class ActionKind {
  kKill,
  kExit,
  kHang,
  kDeletePod,
  kApiErrors,
  kHook,
  kPatchJob,
  kEvict,
  kOom,
  kNodeDown,
  kNodeUp,
  kPullDelay,
  kCordon,    // through the API: the node's spec.unschedulable true (kubectl cordon)
  kUncordon,  // and false again (kubectl uncordon)
  kEvictPod,  // through the API: the pods/eviction subresource (PodDisruptionBudgets decide)
  kDrain      // through the API: kubectl drain --ignore-daemonsets (cordon, evict, retry 429s)
};
// "kill", "exit", "hang", "delete-pod", "api-errors", "hook", "patch-job", "evict", "oom",
// "node-down", "node-up", "pull-delay", "cordon", "uncordon", "evict-pod", "drain".
const char* ActionName(ActionKind kind);

struct FaultAction {
  ActionKind kind = ActionKind::kKill;
  PodTarget target;                 // kKill, kExit, kHang, kDeletePod, kEvictPod
  int signal = SIGKILL;             // kKill
  int exit_code = 1;                // kExit
  ClientFaultRule api_rule;         // kApiErrors
  Duration api_duration{0};         // kApiErrors: how long the rule stays (0 = to the end)
  std::string hook;                 // kHook: the name given to SetHook
  std::string job;                  // kPatchJob: ns/name or name
  Json patch;                       // kPatchJob: a merge patch (e.g. spec.runPolicy.suspend)
  std::string message;              // kEvict: the eviction message ("" = a memory-pressure one)
  std::string node = "pjemu-node";  // kNodeDown, kNodeUp; kCordon, kUncordon, kDrain ("" =
                                    // the cluster's only node, read when the fault fires)
  Duration timeout = 60s;           // kDrain: how long refused (429) evictions are retried
  NodeLifecycleTiming node_timing;  // kNodeDown
  std::string image;                // kPullDelay: a glob on the image reference
  Duration pull_delay{0};           // kPullDelay
  bool pick_random = false;         // pod actions: one of the matching pods, seeded
};

struct Trigger {
  enum class Kind { kAt, kJobCondition, kAfterFault, kLogMatch, kMetrics };
  Kind kind = Kind::kAt;
  Duration delay{0};       // kAt: after Arm(); others: after the trigger matched
  Duration jitter{0};      // a seeded random extra delay in [0, jitter)
  std::string job;         // kJobCondition: ns/name or name (namespace "default")
  std::string condition;   // kJobCondition: a condition type that must be True
  std::string fault;       // kAfterFault: the id of the other fault
  PodTarget pod;           // kLogMatch, kMetrics: the pod (and container) to watch
  std::string regex;       // kLogMatch: ECMAScript regex searched in each log line
  std::int64_t step = 0;   // kMetrics: a step record with step >= this, or
  std::int64_t epoch = 0;  // an epoch record with epoch >= this (after its test)
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
  Duration poll_interval = 500ms;  // how often condition, log and metrics triggers look
  std::uint64_t seed = 1;          // jitter and pick_random
};

// What the injector needs from the node (the kubelet) for node-level faults; each is optional
// and Add refuses a fault whose seam is missing. Called on the EventLoop thread.
struct NodeSeams {
  // The kubelet's eviction manager evicts ns/pod (kNotFound when the node does not run it).
  std::function<Status(const std::string& ns, const std::string& pod, const std::string& msg)>
      evict;
  // Powers the node off (its kubelet and every container process stop at once) or on again.
  std::function<Status(const std::string& node, bool up)> power;
  // From now on pulls of images matching the glob take this long (cached copies are dropped):
  // SlowRegistry::SetDelay on the kubelet's image pull seam.
  std::function<void(const std::string& glob, Duration delay)> pull_delay;
  // Reads what the triggers look at: the log text of a pod's container ("" = the only/first
  // one) and the trainer's metrics file (JSON lines) of a pod; "" when there is none yet.
  std::function<std::string(const std::string& ns, const std::string& pod,
                            const std::string& container)>
      read_log;
  std::function<std::string(const std::string& ns, const std::string& pod)> read_metrics;
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
  void SetNodeSeams(NodeSeams seams) { node_ = std::move(seams); }

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
  bool TriggerMatched(const Trigger& t);
  void NodeDown(const FaultSpec& spec);
  // The log entry, then the faults waiting for this one.
  void Finish(const FaultSpec& spec, FaultRecord record);
  // `named`, or ("") the cluster's only node (kInvalid when it has another number).
  Result<std::string> NodeOf(const std::string& named);
  // kDrain: cordons, then DrainStep until no eviction is refused or the timeout (a drain still
  // retrying when Stop() is called leaves no log entry).
  void StartDrain(const FaultSpec& spec, FaultRecord record);
  struct Drain;
  void DrainStep(const FaultSpec& spec, std::shared_ptr<Drain> drain);

  EventLoop& loop_;
  client::Client& client_;
  InjectorOptions options_;
  FaultyProcessRunner* processes_ = nullptr;
  FaultyClient* api_ = nullptr;
  std::map<std::string, std::function<Status()>> hooks_;
  NodeSeams node_;
  Random random_;
  std::vector<FaultSpec> specs_;
  std::map<std::string, bool> scheduled_;  // ids whose trigger has matched
  std::size_t fired_ = 0;
  std::vector<EventLoop::TimerId> timers_;
  std::map<std::string, std::vector<EventLoop::TimerId>> node_timers_;  // node-down steps
  std::vector<FaultRecord> log_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(false);
};

}  // namespace pjemu::faults
