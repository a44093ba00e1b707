// ReconcileJobs of the Training Operator v1.9.4 (pkg/controller.v1/common/job.go) and the
// PyTorch UpdateJobStatus, as one pure pass that records what the real controller would do.
#include "emulator/pytorchjob/job_status.h"

#include <algorithm>
#include <map>
#include <optional>

#include "emulator/api/json_fields.h"
#include "emulator/pytorchjob/conditions.h"
#include "emulator/pytorchjob/job_spec.h"

namespace pjemu::pytorchjob {

using api::Field, api::HasMaster, api::IsFinished, api::IsRunning, api::IsSucceeded,
    api::IsSuspended, api::IsSuspendedCondition, api::JobReason, api::OptInt, api::ReplicaSpec,
    api::ReplicaTypes, api::Replicas, api::RestartPolicy, api::Str, api::TotalReplicas;
using api::kCreated, api::kFailed, api::kMaster, api::kReplicaIndexLabel, api::kRestarting,
    api::kRunning, api::kSucceeded, api::kSuspended, api::kWorker;
using controller::IsActivePod;

namespace {

class Pass {
 public:
  Pass(const Json& job, const api::ObjectList& pods, const api::ObjectList& services, Time now,
       const InitContainerOptions& init)
      : job_(job),
        pods_(pods),
        services_(services),
        now_(now),
        init_(init),
        name_(Str(Field(job, "metadata"), "name")),
        ns_(Str(Field(job, "metadata"), "namespace")) {}

  Sync Run();

 private:
  void KeepFinished();
  void Suspend();
  void ResumeIfSuspended();
  std::string FailureReason();
  void Fail(const std::string& failure);
  bool ReconcileReplicas();
  void Event(const char* type, const std::string& reason, const std::string& message) {
    out_.actions.push_back(Action::Event(type, reason, message));
  }
  void Create(const api::ResourceType& type, Json object) {
    out_.actions.push_back(Action::Create(type, std::move(object)));
  }
  void Delete(const api::ResourceType& type, std::string name) {
    out_.actions.push_back(Action::Delete(type, std::move(name)));
  }
  void Condition(const char* type, const char* status, const char* reason, const std::string& msg) {
    UpdateJobConditions(st(), type, status, JobReason(reason), msg, now_);
  }
  void SetCompletionTime() {
    if (Field(st(), "completionTime").is_null()) st()["completionTime"] = FormatTime(now_);
  }
  Json& st() { return out_.status; }
  Json& ReplicaStatuses() {
    if (!st()["replicaStatuses"].is_object()) st()["replicaStatuses"] = Json::object();
    return st()["replicaStatuses"];
  }

  void DeletePodsAndServices();
  void ApplyTtl();
  void RecordAbnormalPods();
  void ReconcilePods(const std::string& rtype);
  void ReconcileServices(const std::string& rtype);
  void UpdateJobStatus();
  void RequeueForDeadline();

  const Json& job_;
  const api::ObjectList& pods_;
  const api::ObjectList& services_;
  const Time now_;
  const InitContainerOptions& init_;
  const std::string name_;
  const std::string ns_;
  Sync out_;
};

void Pass::DeletePodsAndServices() {
  for (const std::string& pod_name : PodsToCleanUp(job_, st(), pods_)) {
    // DeletePod skips pods that are already terminating; the same-named service goes too.
    auto it = std::find_if(pods_.begin(), pods_.end(), [&](const Json& p) {
      return Str(Field(p, "metadata"), "name") == pod_name;
    });
    if (it != pods_.end() && Field(Field(*it, "metadata"), "deletionTimestamp").is_null()) {
      Delete(api::Pods(), pod_name);
    }
    Delete(api::Services(), pod_name);
  }
}

void Pass::ApplyTtl() {
  TtlDecision ttl = CleanupJob(job_, st(), now_);
  if (ttl.delete_job) Delete(api::PyTorchJobs(), name_);
  if (ttl.requeue_after) out_.requeue_after = ttl.requeue_after;
  if (!ttl.error.ok()) out_.error = ttl.error;
}

void Pass::RecordAbnormalPods() {
  for (const Json& pod : pods_) {
    if (!IsActivePod(pod)) continue;
    const std::string pod_name = Str(Field(pod, "metadata"), "name");
    const Json& ps = Field(pod, "status");
    auto record = [&](const Json& cs) {
      const Json& state = Field(cs, "state");
      const Json& term = Field(state, "terminated");
      if (term.is_object() && OptInt(term, "exitCode").value_or(0) != 0) {
        Event("Warning", Str(term, "reason"),
              "Error pod " + pod_name + " container " + Str(cs, "name") +
                  " exitCode: " + std::to_string(*OptInt(term, "exitCode")) +
                  " terminated message: " + Str(term, "message"));
      }
      const Json& wait = Field(state, "waiting");
      if (wait.is_object() && !Str(wait, "message").empty()) {
        Event("Warning", Str(wait, "reason"),
              "Error pod " + pod_name + " container " + Str(cs, "name") +
                  " waiting message: " + Str(wait, "message"));
      }
    };
    const Json& containers = Field(ps, "containerStatuses");
    const Json& inits = Field(ps, "initContainerStatuses");
    if (containers.is_array() && !containers.empty()) {
      for (const Json& cs : containers) record(cs);
      continue;
    }
    if (inits.is_array() && !inits.empty()) {
      for (const Json& cs : inits) record(cs);
      continue;
    }
    const Json& conds = Field(ps, "conditions");
    if (!conds.is_array() || conds.empty()) continue;
    // The latest condition by lastTransitionTime (RFC 3339 UTC text sorts by time).
    const Json* latest = &conds[0];
    for (const Json& c : conds) {
      if (Str(c, "lastTransitionTime") > Str(*latest, "lastTransitionTime")) latest = &c;
    }
    if (Str(*latest, "status") == "True") continue;
    Event("Warning", Str(*latest, "reason"),
          "Error pod " + pod_name + " condition message: " + Str(*latest, "message"));
  }
}

void Pass::ReconcilePods(const std::string& rtype) {
  const Json& spec = ReplicaSpec(job_, rtype);
  const std::string policy = RestartPolicy(spec);
  const std::int64_t replicas = Replicas(spec);
  const api::ObjectList pods = FilterForReplicaType(pods_, rtype);
  ReplicaStatuses()[rtype] = Json::object();  // initializeReplicaStatuses
  std::map<std::int64_t, std::vector<const Json*>> slices;
  for (const Json& pod : pods) {
    const std::string idx = Str(Field(Field(pod, "metadata"), "labels"), kReplicaIndexLabel);
    char* end = nullptr;
    long long i = std::strtoll(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || i < 0) continue;  // logged upstream, then ignored
    slices[i].push_back(&pod);
  }
  const std::int64_t size = SliceSize(pods, replicas);
  for (std::int64_t index = 0; index < size; ++index) {
    const auto& slice = slices[index];
    if (slice.size() > 1) continue;  // "too many pods": a warning in the log only
    if (slice.empty()) {
      if (index >= replicas) continue;
      if (!Str(Field(Field(spec, "template"), "spec"), "restartPolicy").empty()) {
        Event("Warning", "SetPodTemplateRestartPolicy",
              "Restart policy in pod template will be overwritten by restart policy in "
              "replica spec");
      }
      Result<Json> pod = DesiredPod(job_, rtype, index, init_);
      if (!pod.ok()) {
        out_.error = pod.status();
        return;
      }
      Create(api::Pods(), std::move(*pod));
      continue;
    }
    const Json& pod = *slice[0];
    const std::string pod_name = Str(Field(pod, "metadata"), "name");
    const bool deleting = !Field(Field(pod, "metadata"), "deletionTimestamp").is_null();
    if (index >= replicas && !deleting) Delete(api::Pods(), pod_name);
    const std::int64_t exit_code = PytorchExitCode(pod);
    if (exit_code != 0xbeef) {
      Event("Normal", "ExitedWithCode",
            "Pod: " + ns_ + "." + pod_name + " exited with code " + std::to_string(exit_code));
    }
    const bool failed = Str(Field(pod, "status"), "phase") == "Failed";
    if (failed && ((policy == "ExitCode" && IsRetryableExitCode(exit_code)) ||
                   policy == "OnFailure" || policy == "Always")) {
      if (!deleting) Delete(api::Pods(), pod_name);
      const std::string msg =
          "job " + name_ + " is restarting because " + rtype + " replica(s) failed.";
      Event("Warning", JobReason("Restarting"), msg);
      Condition(kRestarting, "True", "Restarting", msg);
    } else if (failed && policy == "ExitCode") {
      const std::string msg =
          "job \"" + name_ + "\" is failing because \"" + rtype + "\" replica(s) failed.";
      Event("Warning", JobReason("Failed"), msg);
      Condition(kFailed, "True", "Failed", msg);
    }
    CountPod(ReplicaStatuses()[rtype], pod);
  }
}

void Pass::ReconcileServices(const std::string& rtype) {
  const std::int64_t replicas = Replicas(ReplicaSpec(job_, rtype));
  const api::ObjectList services = FilterForReplicaType(services_, rtype);
  std::map<std::int64_t, std::vector<const Json*>> slices;
  for (const Json& svc : services) {
    const std::string idx = Str(Field(Field(svc, "metadata"), "labels"), kReplicaIndexLabel);
    char* end = nullptr;
    long long i = std::strtoll(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || i < 0) continue;
    slices[i].push_back(&svc);
  }
  const std::int64_t size = SliceSize(services, replicas);
  for (std::int64_t index = 0; index < size; ++index) {
    const auto& slice = slices[index];
    if (slice.size() > 1) continue;
    if (slice.empty()) {
      if (index >= replicas) continue;
      Result<Json> svc = DesiredService(job_, rtype, index);
      if (!svc.ok()) {
        out_.error = svc.status();
        return;
      }
      Create(api::Services(), std::move(*svc));
    } else if (index >= replicas) {
      Delete(api::Services(), Str(Field(*slice[0], "metadata"), "name"));
    }
  }
}

void Pass::UpdateJobStatus() {
  if (Field(st(), "startTime").is_null()) st()["startTime"] = FormatTime(now_);
  const bool has_master = HasMaster(job_);
  const bool elastic = Field(Field(job_, "spec"), "elasticPolicy").is_object();
  for (const std::string& rtype : ReplicaTypes(job_)) {
    const Json& spec = ReplicaSpec(job_, rtype);
    Json& rs = ReplicaStatuses()[rtype];
    if (!rs.is_object()) rs = Json::object();
    rs["selector"] = ReplicaSelector(name_, rtype);
    const std::int64_t succeeded = OptInt(rs, "succeeded").value_or(0);
    const std::int64_t running = OptInt(rs, "active").value_or(0);
    const std::int64_t failed = OptInt(rs, "failed").value_or(0);
    const std::int64_t replicas = Replicas(spec);
    const std::int64_t expected = replicas - succeeded;
    if (has_master) {
      if (rtype == kMaster) {
        if (running > 0) {
          Condition(kRunning, "True", "Running", "PyTorchJob " + name_ + " is running.");
        }
        if (expected == 0) {
          const std::string msg = "PyTorchJob " + name_ + " is successfully completed.";
          Event("Normal", JobReason("Succeeded"), msg);
          SetCompletionTime();
          Condition(kSucceeded, "True", "Succeeded", msg);
          return;  // the remaining replica types are not looked at in this pass
        }
      }
    } else if (rtype == kWorker) {
      if (expected == 0 || (elastic && succeeded > 0)) {
        const std::string msg = "PyTorchJob " + ns_ + "/" + name_ + " successfully completed.";
        Event("Normal", JobReason("Succeeded"), msg);
        SetCompletionTime();
        Condition(kSucceeded, "True", "Succeeded", msg);
      } else if (running > 0) {
        Condition(kRunning, "True", "Running", "PyTorchJob " + ns_ + "/" + name_ + " is running.");
      }
    }
    if (failed > 0 && replicas > succeeded + running) {
      if (RestartPolicy(spec) != "Never") {
        const std::string msg = "PyTorchJob " + name_ + " is restarting because " +
                                std::to_string(failed) + " " + rtype + " replica(s) failed.";
        Event("Warning", JobReason("Restarting"), msg);
        Condition(kRestarting, "True", "Restarting", msg);
      } else {
        const std::string msg = "PyTorchJob " + name_ + " is failed because " +
                                std::to_string(failed) + " " + rtype + " replica(s) failed.";
        Event("Normal", JobReason("Failed"), msg);
        SetCompletionTime();
        Condition(kFailed, "True", "Failed", msg);
      }
    }
  }
}

void Pass::RequeueForDeadline() {
  // Upstream enqueues this into a no-op queue; pjemu fires at the deadline itself
  // (BEHAVIOUR.md point 46, D1).
  auto ads = OptInt(Field(Field(job_, "spec"), "runPolicy"), "activeDeadlineSeconds");
  auto start = ParseTime(Str(st(), "startTime"));
  if (!ads || !start || IsFinished(st())) return;
  Duration left = *start + std::chrono::seconds(*ads) - now_;
  if (left < Duration::zero()) left = Duration::zero();
  if (!out_.requeue_after || left < *out_.requeue_after) out_.requeue_after = left;
}

Sync Pass::Run() {
  out_.status = Field(job_, "status").is_object() ? job_["status"] : Json::object();
  // The create-event predicate puts Created into the cached copy before the first reconcile.
  // That copy is what the pass's result is compared with; else the status as read.
  std::optional<Json> cached;
  if (!Field(st(), "conditions").is_array() || st()["conditions"].empty()) {
    Condition(kCreated, "True", "Created", "PyTorchJob " + name_ + " is created.");
    cached = st();
  }
  const Json& old = cached ? *cached : Field(job_, "status");
  if (IsFinished(st())) {
    KeepFinished();
  } else if (IsSuspended(job_)) {
    Suspend();
  } else {
    ResumeIfSuspended();
    RecordAbnormalPods();
    if (std::string failure = FailureReason(); !failure.empty()) {
      Fail(failure);
      out_.status_changed = true;
      return std::move(out_);
    }
    if (!ReconcileReplicas()) return std::move(out_);
    UpdateJobStatus();
    RequeueForDeadline();
  }
  out_.status_changed = st() != old;
  return std::move(out_);
}

// A finished job: its pods and services go (cleanPodPolicy), its TTL runs, and on success the
// still-active replicas count as succeeded.
void Pass::KeepFinished() {
  DeletePodsAndServices();
  ApplyTtl();
  if (IsSucceeded(st()) && Field(st(), "replicaStatuses").is_object()) {
    for (auto& [rtype, rs] : st()["replicaStatuses"].items()) {
      std::int64_t active = OptInt(rs, "active").value_or(0);
      std::int64_t succeeded = OptInt(rs, "succeeded").value_or(0) + active;
      rs.erase("active");
      if (succeeded) rs["succeeded"] = succeeded;
    }
  }
}

// spec.runPolicy.suspend: pods and services go, Running turns False and Suspended True.
void Pass::Suspend() {
  DeletePodsAndServices();
  if (Field(st(), "replicaStatuses").is_object()) {
    for (auto& [rtype, rs] : st()["replicaStatuses"].items()) rs.erase("active");
  }
  const std::string msg = std::string(api::kPyTorchJobKind) + " " + name_ + " is suspended.";
  if (IsRunning(st())) Condition(kRunning, "False", "Suspended", msg);
  if (!IsSuspendedCondition(st())) Condition(kSuspended, "True", "Suspended", msg);
  Event("Normal", JobReason("Suspended"), msg);
}

// A job no longer suspended: Suspended turns False and the start time starts again.
void Pass::ResumeIfSuspended() {
  if (!IsSuspendedCondition(st())) return;
  const std::string msg = std::string(api::kPyTorchJobKind) + " " + name_ + " is resumed.";
  Condition(kSuspended, "False", "Resumed", msg);
  st()["startTime"] = FormatTime(now_);
  Event("Normal", JobReason("Resumed"), msg);
}

// Why the job fails now (backoffLimit, then activeDeadlineSeconds), or "".
std::string Pass::FailureReason() {
  const auto active = std::count_if(pods_.begin(), pods_.end(), IsActivePod);
  const auto failed = std::count_if(pods_.begin(), pods_.end(), [](const Json& p) {
    return Str(Field(p, "status"), "phase") == "Failed";
  });
  std::int64_t prev_failed = 0;
  if (Field(st(), "replicaStatuses").is_object()) {
    for (const auto& [rtype, rs] : st()["replicaStatuses"].items()) {
      prev_failed += OptInt(rs, "failed").value_or(0);
    }
  }
  if (auto limit = OptInt(Field(Field(job_, "spec"), "runPolicy"), "backoffLimit")) {
    // The work queue's requeue count is always 0 upstream (a no-op fake queue).
    const std::int64_t previous_retry = 0;
    const bool exceeds =
        failed > prev_failed && active != TotalReplicas(job_) && previous_retry + 1 > *limit;
    if (exceeds || PastBackoffLimit(job_, pods_)) {
      return "Job " + name_ + " has failed because it has reached the specified backoff limit";
    }
  }
  if (PastActiveDeadline(job_, st(), now_)) {
    return "Job " + name_ + " has failed because it was active longer than specified deadline";
  }
  return "";
}

// Failed is set before the cleanup, so cleanPodPolicy is respected (BEHAVIOUR.md point 37).
void Pass::Fail(const std::string& failure) {
  SetCompletionTime();
  Condition(kFailed, "True", "Failed", failure);
  DeletePodsAndServices();
  ApplyTtl();
  Event("Normal", JobReason("Failed"), failure);
}

// Pods, then services, per replica type (Master first); false when a write failed.
bool Pass::ReconcileReplicas() {
  for (const std::string& rtype : ReplicaTypes(job_)) {
    ReconcilePods(rtype);
    if (!out_.error.ok()) return false;
    ReconcileServices(rtype);
    if (!out_.error.ok()) return false;
  }
  return true;
}

}  // namespace

Sync ComputeJobStatus(const Json& job, const api::ObjectList& pods, const api::ObjectList& services,
                      Time now, const InitContainerOptions& init) {
  Sync out;
  try {
    out = Pass(job, pods, services, now, init).Run();
  } catch (const Json::exception& e) {
    out.error = InternalError(std::string("compute job status: ") + e.what());
  }
  // ReconcileJobs returns its error before UpdateJobStatus writes the status.
  out.error_order = controller::ErrorOrder::kBeforeStatus;
  return out;
}

}  // namespace pjemu::pytorchjob
