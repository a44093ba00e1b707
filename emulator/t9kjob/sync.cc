// The PyTorchTrainingJob controller's pass, step by step (BEHAVIOUR.md numbers the points).
#include "emulator/t9kjob/sync.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/api/t9k.h"
#include "emulator/controller/children.h"
#include "emulator/t9kjob/desired.h"

namespace pjemu::t9kjob {

namespace t9k = api::t9k;
using api::ArrayOr, api::Field, api::FieldAt, api::OptInt, api::Str;

namespace {

// The condition messages T9k's console shows (spec: user manual and screenshots).
constexpr char kInitializedMsg[] = "The job has been initialized successfully.";
constexpr char kRunningMsg[] = "All pods are running normally or have completed successfully.";
constexpr char kStillRunningMsg[] = "The job is still running.";
constexpr char kSucceededMsg[] = "The job has finished successfully.";
constexpr char kFailedMsg[] = "The job exited with an error code.";
constexpr char kPausedMsg[] = "All pods are deleted or being deleted.";

// The state of one pass: the inputs, what it found and what it decided.
struct Pass {
  const Json& job;
  const Children& children;
  Time now;
  Sync out;
  std::map<std::string, const Json*> pods;  // every controlled pod by name
  std::vector<Replica> desired;
  std::set<std::string> created;  // pods created in this pass
  std::set<std::string> deleted;  // pods deleted in this pass

  Json& status() { return out.status; }
  std::string Name() const { return Str(Field(job, "metadata"), "name"); }
  void Event(const char* type, std::string reason, std::string message) {
    out.actions.push_back(Action::Event(type, std::move(reason), std::move(message)));
  }
  void Create(const api::ResourceType& type, Json object) {
    std::string name = Str(Field(object, "metadata"), "name");
    if (&type == &api::Pods()) created.insert(name);
    out.actions.push_back(Action::Create(type, std::move(object)));
  }
  void Delete(const api::ResourceType& type, const std::string& name) {
    if (&type == &api::Pods()) deleted.insert(name);
    out.actions.push_back(Action::Delete(type, name));
  }
};

// Sets condition `type` (JobCondition): appended when absent; lastTransitionTime moves only
// when its status changes.
void SetCondition(Json& status, const std::string& type, const std::string& value,
                  const std::string& reason, const std::string& message, Time now) {
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  for (Json& c : conditions) {
    if (Str(c, "type") != type) continue;
    if (Str(c, "status") != value) c["lastTransitionTime"] = FormatTime(now);
    c["status"] = value;
    c["reason"] = reason;
    c["message"] = message;
    return;
  }
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"lastTransitionTime", FormatTime(now)},
                        {"reason", reason},
                        {"message", message}});
}

const Json* FindCondition(const Json& status, const std::string& type) {
  for (const Json& c : ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") == type) return &c;
  }
  return nullptr;
}

bool Finished(const std::string& phase) { return phase == t9k::kSucceeded || phase == t9k::kFailed; }

// The replica a pod stands for, by its type and index labels; nullopt for a stray pod.
std::optional<Replica> ReplicaOf(const Json& job, const Json& pod) {
  const std::string type = Str(FieldAt(pod, {"metadata", "labels"}), t9k::kReplicaTypeLabel);
  auto index = controller::IndexLabel(pod, t9k::kReplicaIndexLabel);
  const Json& specs = t9k::ReplicaSpecs(job);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (t9k::TypeName(specs[i]) == type && index) return Replica{i, *index};
  }
  return std::nullopt;
}

const Json* Live(const Pass& p, const std::string& name) {
  auto it = p.pods.find(name);
  if (it == p.pods.end() || api::Deleting(*it->second)) return nullptr;
  return it->second;
}

// --- Point 1: the first pass announces the job and initializes its status. ---
void Initialize(Pass& p) {
  if (!t9k::Phase(p.job).empty()) return;
  p.status()["phase"] = t9k::kPending;
  SetCondition(p.status(), t9k::kInitialized, "True", "", kInitializedMsg, p.now);
  SetCondition(p.status(), t9k::kCompleted, "False", "NotFinished", kStillRunningMsg, p.now);
  p.Event("Normal", "Created", "A " + std::string(t9k::kKind) + " has been created: " + p.Name());
  p.Event("Normal", "Start", kInitializedMsg);
}

// --- Point 9: cleanUpPolicy once the job has ended. ---
void CleanUp(Pass& p) {
  const std::string policy = Str(FieldAt(p.job, {"spec", "runPolicy"}), "cleanUpPolicy");
  if (policy != "All" && policy != "Unfinished") return;
  for (const auto& [name, pod] : p.pods) {
    if (api::Deleting(*pod)) continue;
    const std::string phase = api::PodPhase(*pod);
    if (policy == "Unfinished" && (phase == "Succeeded" || phase == "Failed")) continue;
    p.Delete(api::Pods(), name);
  }
  if (policy == "All") {
    for (const Json& svc : p.children.services) {
      if (!api::Deleting(svc)) p.Delete(api::Services(), Str(Field(svc, "metadata"), "name"));
    }
  }
}

// --- Points 7-8: the job ends. ---
void Finish(Pass& p, bool succeeded, const std::string& reason, const std::string& message) {
  Json& s = p.status();
  s["phase"] = succeeded ? t9k::kSucceeded : t9k::kFailed;
  SetCondition(s, t9k::kCondRunning, "False", reason, message, p.now);
  SetCondition(s, t9k::kCondFailed, succeeded ? "False" : "True", reason, message, p.now);
  SetCondition(s, t9k::kCompleted, succeeded ? "True" : "False", reason, message, p.now);
  if (succeeded) {
    SetCondition(s, t9k::kReplicaFailure, "False", "", kRunningMsg, p.now);
    p.Event("Normal", "Succeeded", message);
  } else {
    p.Event("Warning", reason, message);
  }
  CleanUp(p);
}

// --- Point 10: activeDeadlineSeconds, counted from initialization. ---
bool PastDeadline(Pass& p) {
  auto ads = OptInt(FieldAt(p.job, {"spec", "runPolicy"}), "activeDeadlineSeconds");
  const Json* init = FindCondition(p.status(), t9k::kInitialized);
  if (!ads || !init) return false;
  auto start = ParseTime(Str(*init, "lastTransitionTime"));
  if (!start) return false;
  const Time deadline = *start + std::chrono::seconds(*ads);
  if (p.now < deadline) {
    p.out.requeue_after = std::chrono::duration_cast<Duration>(deadline - p.now);
    return false;
  }
  for (const auto& [name, pod] : p.pods) {
    if (controller::IsActivePod(*pod)) p.Delete(api::Pods(), name);
  }
  Finish(p, false, "DeadlineExceeded",
         fmt::format("The job is active longer than its deadline of {}s.", *ads));
  return true;
}

// --- Point 11: pause deletes every replica; leaving it resumes them. ---
void Pause(Pass& p) {
  Json& s = p.status();
  if (Str(s, "phase") != t9k::kPaused) p.Event("Normal", "Paused", kPausedMsg);
  s["phase"] = t9k::kPaused;
  SetCondition(s, t9k::kCondPaused, "True", "Paused", kPausedMsg, p.now);
  if (FindCondition(s, t9k::kCondRunning)) {
    SetCondition(s, t9k::kCondRunning, "False", "Paused", kPausedMsg, p.now);
  }
  for (const auto& [name, pod] : p.pods) {
    if (!api::Deleting(*pod)) p.Delete(api::Pods(), name);
  }
}

// The tasks[].restartCount of the replica spec at `spec` (job-wide backoffCount aside).
void CountRestart(Pass& p, std::size_t spec) {
  Json& s = p.status();
  s["backoffCount"] = OptInt(s, "backoffCount").value_or(0) + 1;
  Json& tasks = s["tasks"];
  if (!tasks.is_array()) tasks = Json::array();
  while (tasks.size() <= spec) tasks.push_back(Json::object());
  tasks[spec]["restartCount"] = OptInt(tasks[spec], "restartCount").value_or(0) + 1;
}

// --- Points 5-6: failed replicas restart under their policy, within the job-wide backoff
// limit; otherwise the job fails. Returns true when the job failed. ---
bool HandleFailures(Pass& p) {
  const std::int64_t limit =
      OptInt(FieldAt(p.job, {"spec", "runPolicy"}), "backoffLimit").value_or(t9k::kDefaultBackoffLimit);
  for (const auto& [name, pod] : p.pods) {
    if (api::Deleting(*pod) || api::PodPhase(*pod) != "Failed") continue;
    auto r = ReplicaOf(p.job, *pod);
    if (!r) continue;
    const Json& rspec = t9k::ReplicaSpecs(p.job)[r->spec];
    const Json& containers = ArrayOr(FieldAt(*pod, {"spec", "containers"}));
    const std::string c0 = containers.empty() ? "" : Str(containers[0], "name");
    const std::int64_t code = controller::ContainerExitCode(*pod, c0).value_or(-1);
    const std::string failed = fmt::format("Replica[{}] failed with exit code {}.", name, code);
    SetCondition(p.status(), t9k::kReplicaFailure, "True", "ReplicaFailed", failed, p.now);
    if (!RestartsAfterFailure(t9k::RestartPolicy(rspec), code)) {
      Finish(p, false, "Failed", kFailedMsg);
      return true;
    }
    const std::int64_t count = OptInt(p.status(), "backoffCount").value_or(0);
    if (count >= limit) {
      Finish(p, false, "BackoffLimitExceeded",
             fmt::format("The job has been restarted {} times and reached its backoff limit of "
                         "{}.",
                         count, limit));
      return true;
    }
    CountRestart(p, r->spec);
    p.Event("Warning", "RestartReplica",
            fmt::format("Replica[{}] failed with exit code {}: restarting it ({}/{}).", name, code,
                        count + 1, limit));
    p.Delete(api::Pods(), name);
  }
  return false;
}

// --- Point 7: the job succeeds when its master (first replica of the first spec) does. ---
bool MasterSucceeded(const Pass& p) {
  const Json* master = Live(p, MasterName(p.job));
  return master && api::PodPhase(*master) == "Succeeded";
}

// --- Point 12: elastic scale-down removes the highest indices beyond expectedReplicas. ---
void ScaleDown(Pass& p) {
  std::set<std::string> wanted;
  for (const Replica& r : p.desired) wanted.insert(PodName(p.job, r));
  for (const auto& [name, pod] : p.pods) {
    if (!api::Deleting(*pod) && !wanted.count(name) && ReplicaOf(p.job, *pod)) {
      p.Delete(api::Pods(), name);
    }
  }
}

bool KnownReplica(const Json& status, const std::string& name) {
  for (const Json& task : ArrayOr(Field(status, "tasks"))) {
    for (const Json& r : ArrayOr(Field(task, "replicas"))) {
      if (Str(r, "name") == name) return true;
    }
  }
  return false;
}

// --- Points 2-4: every wanted replica has a pod, the master a Service. ---
void CreateMissing(Pass& p) {
  const std::string phase = Str(p.status(), "phase");
  const Launch launch = t9k::DebugEnabled(p.job)                     ? Launch::kDebug
                        : phase == t9k::kPaused || phase == t9k::kResuming ? Launch::kResume
                                                                       : Launch::kTemplate;
  for (const Replica& r : p.desired) {
    const std::string name = PodName(p.job, r);
    if (p.pods.count(name) || p.deleted.count(name)) continue;
    Result<Json> pod = DesiredPod(p.job, r, launch);
    if (!pod.ok()) {
      p.out.error = pod.status();
      return;
    }
    if (!KnownReplica(p.job.value("status", Json::object()), name)) {
      p.Event("Normal", "NewReplica",
              "Create the replica[" + name + "] for the first time.");
    }
    p.Create(api::Pods(), std::move(*pod));
  }
  const std::string master = MasterName(p.job);
  for (const Json& svc : p.children.services) {
    if (Str(Field(svc, "metadata"), "name") == master) return;
  }
  p.Create(api::Services(), DesiredMasterService(p.job));
}

// --- Point 13: the TensorBoard of tensorboardSpec, and its readiness in status. ---
void SyncTensorBoard(Pass& p) {
  Json desired = DesiredTensorBoard(p.job);
  if (desired.is_null()) return;
  const std::string name = Str(Field(desired, "metadata"), "name");
  const Json* tb = nullptr;
  for (const Json& t : p.children.tensorboards) {
    if (Str(Field(t, "metadata"), "name") == name) tb = &t;
  }
  Json dependent = {{"apiVersion", t9k::kTensorBoardApiVersion},
                    {"kind", t9k::kTensorBoardKind},
                    {"name", name},
                    {"namespace", Str(Field(p.job, "metadata"), "namespace")}};
  if (tb == nullptr) {
    p.Create(api::TensorBoards(), std::move(desired));
    p.status()["tensorboard"] = {{"action", "CREATE"},      {"dependent", dependent},
                                 {"note", "TensorBoard [" + name + "] is being created"},
                                 {"ready", false},          {"reason", "DependentCreating"},
                                 {"type", "Normal"}};
    return;
  }
  dependent["uid"] = Str(Field(*tb, "metadata"), "uid");
  const Json* ready = FindCondition(Field(*tb, "status"), "Ready");
  const bool is_ready = ready && Str(*ready, "status") == "True";
  p.status()["tensorboard"] = {
      {"action", "NOP"},
      {"dependent", dependent},
      {"note", "TensorBoard [" + name + "] is " + (is_ready ? "ready" : "not ready")},
      {"ready", is_ready},
      {"reason", is_ready ? "DependentReady" : "DependentNotReady"},
      {"type", "Normal"}};
}

// --- Point 4: Pending until every wanted replica runs (or has completed), then Running. ---
void UpdatePhase(Pass& p) {
  Json& s = p.status();
  bool all_up = !p.desired.empty();
  bool any_failed = false;
  for (const Replica& r : p.desired) {
    const Json* pod = Live(p, PodName(p.job, r));
    const std::string phase = pod ? api::PodPhase(*pod) : "";
    if (phase != "Running" && phase != "Succeeded") all_up = false;
    if (phase == "Failed") any_failed = true;
  }
  if (!all_up) return;
  s["phase"] = t9k::kRunning;
  SetCondition(s, t9k::kCondRunning, "True", "", kRunningMsg, p.now);
  if (!any_failed) SetCondition(s, t9k::kReplicaFailure, "False", "", kRunningMsg, p.now);
  if (FindCondition(s, t9k::kCondPaused)) {
    SetCondition(s, t9k::kCondPaused, "False", "Resumed", kRunningMsg, p.now);
  }
}

// The container summaries of a replica: {name, state, exitCode}.
Json ContainerSummaries(const Json& pod) {
  Json out = Json::array();
  for (const Json& cs : ArrayOr(FieldAt(pod, {"status", "containerStatuses"}))) {
    const Json& state = Field(cs, "state");
    Json c = {{"name", Str(cs, "name")}};
    if (Field(state, "terminated").is_object()) {
      c["state"] = "Terminated";
      c["exitCode"] = OptInt(state["terminated"], "exitCode").value_or(0);
    } else if (Field(state, "running").is_object()) {
      c["state"] = "Running";
    } else {
      c["state"] = "Waiting";
    }
    out.push_back(c);
  }
  return out;
}

// --- Point 14: tasks[] (one per replica spec) and aggregate, from the pods as they are. ---
void UpdateTasks(Pass& p) {
  Json& s = p.status();
  const Json old_tasks = ArrayOr(Field(s, "tasks"));
  Json tasks = Json::array();
  std::map<std::string, std::int64_t> counts = {{"creating", 0},  {"pending", 0}, {"running", 0},
                                                {"succeeded", 0}, {"failed", 0},  {"unknown", 0},
                                                {"deleted", 0}};
  const Json& specs = t9k::ReplicaSpecs(p.job);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Json task = {{"type", Str(specs[i], "type")},
                 {"restartCount", i < old_tasks.size()
                                      ? OptInt(old_tasks[i], "restartCount").value_or(0)
                                      : 0},
                 {"replicas", Json::array()}};
    for (const Replica& r : p.desired) {
      if (r.spec != i) continue;
      const std::string name = PodName(p.job, r);
      Json replica = {{"name", name}};
      const Json* pod = p.pods.count(name) ? p.pods.at(name) : nullptr;
      std::string phase;
      if (pod && !p.deleted.count(name)) {
        replica["uid"] = Str(Field(*pod, "metadata"), "uid");
        phase = ReplicaPhase(*pod);
        replica["containers"] = ContainerSummaries(*pod);
      } else {
        phase = p.created.count(name) ? "Creating" : "Deleted";
      }
      replica["phase"] = phase;
      std::string key = phase;
      std::transform(key.begin(), key.end(), key.begin(), ::tolower);
      ++counts[counts.count(key) ? key : "unknown"];
      task["replicas"].push_back(std::move(replica));
    }
    tasks.push_back(std::move(task));
  }
  s["tasks"] = std::move(tasks);
  Json aggregate = Json::object();
  for (const auto& [k, v] : counts) aggregate[k] = v;
  s["aggregate"] = aggregate;
  if (!s.contains("backoffCount")) s["backoffCount"] = 0;
}

void Run(Pass& p) {
  Initialize(p);
  const std::string phase = Str(p.status(), "phase");
  if (Finished(phase)) return CleanUp(p);
  if (t9k::PauseEnabled(p.job)) return Pause(p);
  if (phase == t9k::kPaused) {
    p.status()["phase"] = t9k::kResuming;
    SetCondition(p.status(), t9k::kCondPaused, "False", "Resuming", "The job is resuming.", p.now);
  }
  if (PastDeadline(p) || HandleFailures(p)) return;
  if (MasterSucceeded(p)) return Finish(p, true, t9k::kSucceeded, kSucceededMsg);
  ScaleDown(p);
  CreateMissing(p);
  SyncTensorBoard(p);
  UpdatePhase(p);
}

}  // namespace

bool IsRetryableExitCode(std::int64_t code) {
  return std::find(std::begin(t9k::kRetryableExitCodes), std::end(t9k::kRetryableExitCodes),
                   code) != std::end(t9k::kRetryableExitCodes);
}

bool RestartsAfterFailure(const std::string& policy, std::int64_t exit_code) {
  if (policy == "Always" || policy == "OnFailure") return true;
  return policy == "ExitCode" && IsRetryableExitCode(exit_code);
}

std::string ReplicaPhase(const Json& pod) {
  const std::string phase = api::PodPhase(pod);
  if ((phase.empty() || phase == "Pending") && Str(Field(pod, "spec"), "nodeName").empty()) {
    return "Creating";
  }
  return phase.empty() ? "Pending" : phase;
}

Sync ComputeSync(const Json& job, const Children& children, Time now) {
  Pass p{job, children, now, {}, {}, DesiredReplicas(job), {}, {}};
  p.out.status = Field(job, "status").is_object() ? job["status"] : Json::object();
  for (const Json& pod : children.pods) p.pods[Str(Field(pod, "metadata"), "name")] = &pod;
  Run(p);
  if (!api::Deleting(job)) UpdateTasks(p);
  p.out.status_changed = p.out.status != Field(job, "status");
  return std::move(p.out);
}

}  // namespace pjemu::t9kjob
