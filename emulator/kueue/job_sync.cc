// Step 1 of KueueController's pass: Kueue's job reconciler (jobframework) for one queued job.
#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/workload.h"
#include "emulator/controller/children.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/kueue/kueue_controller.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
using api::Field, api::FieldAt, api::OptInt, api::Str;

std::string Uid(const Json& object) { return Str(Field(object, "metadata"), "uid"); }
std::string Ns(const Json& object) { return Str(Field(object, "metadata"), "namespace"); }

// Where each pod set goes: the admission's flavors' nodeLabels and tolerations, Kueue's labels
// and the workload annotation.
std::vector<ak::PodSetPlacement> Placements(const Json& workload,
                                            const std::map<std::string, Json>& flavors,
                                            const std::string& local_queue) {
  std::vector<ak::PodSetPlacement> out;
  const Json& admission = FieldAt(workload, {"status", "admission"});
  for (const Json& set : api::ArrayOr(Field(admission, "podSetAssignments"))) {
    ak::PodSetPlacement p;
    p.name = Str(set, "name");
    for (const auto& [res, flavor] : api::ObjectOr(Field(set, "flavors")).items()) {
      auto it = flavors.find(flavor.is_string() ? flavor.get<std::string>() : "");
      if (it == flavors.end()) continue;
      const Json& spec = Field(it->second, "spec");
      for (const auto& [k, v] : api::ObjectOr(Field(spec, "nodeLabels")).items()) {
        if (v.is_string()) p.node_selector[k] = v.get<std::string>();
      }
      for (const Json& t : api::ArrayOr(Field(spec, "tolerations"))) {
        if (std::find(p.tolerations.begin(), p.tolerations.end(), t) == p.tolerations.end()) {
          p.tolerations.push_back(t);
        }
      }
    }
    p.labels = {{ak::kPodSetLabel, p.name},
                {ak::kLocalQueueLabel, local_queue},
                {ak::kClusterQueueLabel, Str(admission, "clusterQueue")}};
    p.annotations = {{ak::kWorkloadAnnotation, Str(Field(workload, "metadata"), "name")}};
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

// A child of a job Kueue manages (a JobSet's Jobs, a TrainJob's JobSet) gets no Workload: its
// parent's admission covers it.
bool KueueController::ManagedParent(const Json& job) const {
  for (const Json& ref : api::ArrayOr(FieldAt(job, {"metadata", "ownerReferences"}))) {
    if (Field(ref, "controller") != Json(true)) continue;
    for (const Kind& k : kinds_) {
      if (k.type->ApiVersion() == Str(ref, "apiVersion") && k.type->kind == Str(ref, "kind")) {
        return true;
      }
    }
  }
  return false;
}

const Json* KueueController::WorkloadOf(const Json& job) const {
  auto key = workload_of_job_.find(Uid(job));
  if (key == workload_of_job_.end()) return nullptr;
  auto wl = workloads_.find(key->second);
  return wl == workloads_.end() ? nullptr : &wl->second;
}

bool KueueController::SyncJob(Kind& kind, const Json& job) {
  if (api::Deleting(job) || ManagedParent(job)) return true;
  const api::Workload& view = *kind.type->workload;
  const bool suspended = view.suspended(job);
  const bool finished = view.state(job).finished;
  const Json* wl = WorkloadOf(job);
  if (wl == nullptr) {
    if (finished) return true;
    if (!suspended) return StopJob(kind, job, "Not admitted by cluster queue");
    return CreateWorkload(kind, job);
  }
  const Json workload = *wl;  // writes below replace the cache's copy
  if (finished) return FinishWorkload(kind, job, workload);
  const std::string queue = Str(FieldAt(job, {"metadata", "labels"}), ak::kQueueNameLabel);
  if (ak::IsPending(workload) && Str(Field(workload, "spec"), "queueName") != queue) {
    return MoveWorkload(workload, queue);  // the queue label changed while the job waited
  }
  if (ak::IsTrue(workload, ak::kFinished)) return true;
  if (ak::IsTrue(workload, ak::kEvicted)) {
    const std::string message = Str(*ak::Condition(workload, ak::kEvicted), "message");
    if (!suspended) return StopJob(kind, job, message);
    // The placement out, then the quota given back.
    return RestoreJob(kind, job, workload) && SyncWorkloadStatus(kind, job, workload);
  }
  if (ak::IsTrue(workload, ak::kAdmitted)) {
    if (suspended) return StartJob(kind, job, workload);
  } else if (!suspended) {
    return StopJob(kind, job, "Not admitted by cluster queue");
  }
  return SyncWorkloadStatus(kind, job, workload);
}

bool KueueController::MoveWorkload(const Json& workload, const std::string& queue) {
  Json moved = workload;
  moved["spec"]["queueName"] = queue;
  return Write(ak::Workloads(), workloads_, std::move(moved), false) != Wrote::kFailed;
}

bool KueueController::CreateWorkload(Kind& kind, const Json& job) {
  const Json& meta = Field(job, "metadata");
  std::int64_t priority = 0;
  Json priority_ref;
  const std::string wpc = Str(Field(meta, "labels"), ak::kPriorityClassLabel);
  if (!wpc.empty()) {
    auto it = priority_classes_.find(wpc);
    if (it == priority_classes_.end()) return false;  // retried: Kueue creates no Workload
    priority = OptInt(it->second, "value").value_or(0);
    priority_ref = {{"group", ak::kGroup}, {"kind", "WorkloadPriorityClass"}, {"name", wpc}};
  }
  auto sets = kind.queue->pod_sets(client_, job);
  if (!sets.ok()) return false;
  const std::string name =
      ak::WorkloadName(kind.type->kind, kind.type->group, Str(meta, "name"), Uid(job));
  Json owner = controller::ControllerRef(job);
  owner["blockOwnerDeletion"] = true;
  Json wl = {{"apiVersion", ak::kApiVersion},
             {"kind", "Workload"},
             {"metadata", {{"name", name},
                           {"namespace", Ns(job)},
                           {"labels", {{ak::kJobUidLabel, Uid(job)}}},
                           {"ownerReferences", Json::array({owner})}}},
             {"spec", {{"podSets", ak::PodSetsJson(*sets)},
                       {"queueName", Str(Field(meta, "labels"), ak::kQueueNameLabel)},
                       {"priority", priority}}}};
  if (!priority_ref.is_null()) wl["spec"]["priorityClassRef"] = priority_ref;
  auto created = client_.Create(ak::Workloads(), Ns(job), std::move(wl));
  if (!created.ok()) return created.status().code() == Code::kAlreadyExists;
  workloads_[api::ObjectKey(*created)] = *created;
  workload_of_job_[Uid(job)] = api::ObjectKey(*created);
  (void)kind.recorder->Record(job, "Normal", "CreatedWorkload",
                              "Created Workload: " + Ns(job) + "/" + name);
  return true;
}

bool KueueController::StartJob(Kind& kind, const Json& job, const Json& workload) {
  const std::string lq = Str(Field(workload, "spec"), "queueName");
  auto started = kind.queue->start(job, Placements(workload, flavors_, lq));
  if (!started.ok()) {
    // Kueue finishes the Workload: the job cannot take the flavor's placement.
    Json wl = workload;
    ak::SetCondition(wl, ak::kFinished, true, "FailedToStart", started.status().message(), loop_.Now());
    return Write(ak::Workloads(), workloads_, std::move(wl), true) != Wrote::kFailed;
  }
  const Wrote wrote = Write(*kind.type, kind.jobs, std::move(*started), false);
  if (wrote != Wrote::kYes) return wrote == Wrote::kStale;
  const std::string cq = Str(FieldAt(workload, {"status", "admission"}), "clusterQueue");
  (void)kind.recorder->Record(job, "Normal", "Started", "Admitted by clusterQueue " + cq);
  return true;
}

// Suspends the job (its pods go); the placement comes out once it is suspended (RestoreJob):
// the API server takes a template change only from a suspended job.
bool KueueController::StopJob(Kind& kind, const Json& job, const std::string& message) {
  Json stopped = job;
  kind.type->workload->set_suspended(stopped, true);
  const Wrote wrote = Write(*kind.type, kind.jobs, std::move(stopped), false);
  if (wrote != Wrote::kYes) return wrote == Wrote::kStale;
  (void)kind.recorder->Record(job, "Normal", "Stopped", message);
  return true;
}

bool KueueController::RestoreJob(Kind& kind, const Json& job, const Json& workload) {
  Json restored = kind.queue->stop(job, ak::PodSetsOf(workload));
  return restored == job ||
         Write(*kind.type, kind.jobs, std::move(restored), false) != Wrote::kFailed;
}

bool KueueController::FinishWorkload(Kind& kind, const Json& job, const Json& workload) {
  if (ak::IsTrue(workload, ak::kFinished)) return true;
  const api::WorkloadState state = kind.type->workload->state(job);
  Json wl = workload;
  ak::SetCondition(wl, ak::kFinished, true, state.succeeded ? "Succeeded" : "Failed",
                   state.message, loop_.Now());
  const Wrote wrote = Write(ak::Workloads(), workloads_, std::move(wl), true);
  if (wrote != Wrote::kYes) return wrote == Wrote::kStale;
  (void)kind.recorder->Record(job, "Normal", "FinishedWorkload",
                              "Workload '" + api::ObjectKey(workload) + "' is declared finished");
  return true;
}

// The Workload controller's part for a queued job's Workload: PodsReady from the job's pods,
// and an evicted Workload's quota given back once its job is suspended (QuotaReserved and
// Admitted False, Requeued True for a preemption).
bool KueueController::SyncWorkloadStatus(Kind& kind, const Json& job, const Json& workload) {
  const Time now = loop_.Now();
  Json wl = workload;
  const bool admitted = ak::IsTrue(wl, ak::kAdmitted);
  const bool evicted = ak::IsTrue(wl, ak::kEvicted);
  if (evicted && FieldAt(wl, {"status", "admission"}).is_object()) {
    const Json& c = *ak::Condition(wl, ak::kEvicted);
    const std::string message = Str(c, "message");
    wl["status"].erase("admission");
    ak::SetCondition(wl, ak::kQuotaReserved, false, "Pending", message, now);
    ak::SetCondition(wl, ak::kAdmitted, false, "NoReservation", "The workload has no reservation", now);
    if (Str(c, "reason") == "Preempted") ak::SetCondition(wl, ak::kRequeued, true, "Preempted", message, now);
  }
  const Json* ready = ak::Condition(wl, ak::kPodsReady);
  if (admitted && !evicted && kind.queue->pods_ready(job)) {
    ak::SetCondition(wl, ak::kPodsReady, true, "Started",
                     "All pods reached readiness and the workload is running", now);
  } else if (ready != nullptr && Str(*ready, "status") == "True" && admitted && !evicted) {
    ak::SetCondition(wl, ak::kPodsReady, false, "WaitForRecovery",
                     "At least one pod has failed, waiting for recovery", now);
  } else if (ready == nullptr || !admitted) {
    ak::SetCondition(wl, ak::kPodsReady, false, "WaitForStart", "Not all pods are ready or succeeded",
                     now);
  }
  return wl == workload ||
         Write(ak::Workloads(), workloads_, std::move(wl), true) != Wrote::kFailed;
}

}  // namespace pjemu::kueue
