#include "emulator/kueue/kueue_controller.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/workload.h"
#include "emulator/controller/queue_integration.h"
#include "emulator/kueue/queue_status.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
using api::Field, api::FieldAt, api::Str;

}  // namespace

KueueController::KueueController(client::Client& client, EventLoop& loop,
                                 const std::vector<const controller::KindDescriptor*>& kinds,
                                 KueueControllerOptions options)
    : client_(client), loop_(loop), options_(options) {
  for (const controller::KindDescriptor* k : kinds) {
    if (k->queue == nullptr) continue;
    const api::ResourceType& type = k->type();
    if (type.workload == nullptr || type.workload->queue_framework == nullptr) continue;
    Kind kind;
    kind.type = &type;
    kind.queue = k->queue;
    kind.recorder = std::make_unique<controller::EventRecorder>(
        client_, loop_.clock(), std::string(type.workload->queue_framework) + "-kueue-controller");
    kinds_.push_back(std::move(kind));
  }
  admission_events_ =
      std::make_unique<controller::EventRecorder>(client_, loop_.clock(), "kueue-admission");
}

KueueController::~KueueController() { Stop(); }

Status KueueController::Start() {
  if (passes_.started()) return Status::Ok();
  passes_.Start();
  auto keep = [this](Cache& cache) {
    return [this, &cache](const api::WatchEvent& e) {
      client::ApplyToCache(cache, e);
      passes_.Trigger();
    };
  };
  const std::pair<const api::ResourceType*, Cache*> watched[] = {
      {&ak::ResourceFlavors(), &flavors_},  {&ak::ClusterQueues(), &cluster_queues_},
      {&ak::LocalQueues(), &local_queues_}, {&ak::WorkloadPriorityClasses(), &priority_classes_},
      {&api::Namespaces(), &namespaces_},  // the namespaceSelectors' labels
      {&ak::Workloads(), &workloads_}};
  for (const auto& [type, cache] : watched) {
    informers_.push_back(std::make_unique<client::Informer>(
        client_, loop_, *type, client::InformerOptions::Named("kueue " + type->plural),
        keep(*cache)));
  }
  for (Kind& kind : kinds_) {
    kind.informer = std::make_unique<client::Informer>(
        client_, loop_, *kind.type,
        client::InformerOptions::Named("kueue " + kind.type->plural, ak::kQueueNameLabel),
        keep(kind.jobs));
  }
  for (auto& informer : informers_) {
    if (Status s = informer->Start(); !s.ok()) {
      Stop();
      return s.WithContext("kueue");
    }
  }
  for (Kind& kind : kinds_) {
    if (Status s = kind.informer->Start(); !s.ok()) {
      Stop();
      return s.WithContext("kueue");
    }
  }
  passes_.Trigger();
  return Status::Ok();
}

void KueueController::Stop() {
  if (!passes_.started()) return;
  passes_.Stop();
  for (auto& informer : informers_) informer->Stop();
  for (Kind& kind : kinds_) {
    if (kind.informer) kind.informer->Stop();
  }
}

void KueueController::SyncAll() {
  if (!passes_.started()) return;
  passes_.Draining([this] {  // the caches take in this pass's own writes, without a new pass
    for (auto& informer : informers_) informer->Drain();
    for (Kind& kind : kinds_) kind.informer->Drain();
  });
  workload_of_job_.clear();
  for (const auto& [key, wl] : workloads_) {
    workload_of_job_[Str(FieldAt(wl, {"metadata", "labels"}), ak::kJobUidLabel)] = key;
  }
  bool ok = true;
  for (Kind& kind : kinds_) {
    const Cache jobs = kind.jobs;  // a write's event may change the cache
    for (const auto& [key, job] : jobs) ok = SyncJob(kind, job) && ok;
  }
  ok = ApplyPlan(Schedule(MakeSnapshot(), loop_.Now())) && ok;
  ok = SyncQueueStatuses() && ok;
  if (!ok) passes_.Arm(options_.retry_interval);
}

Snapshot KueueController::MakeSnapshot() const {
  Snapshot s;
  s.flavors = flavors_;
  s.cluster_queues = cluster_queues_;
  s.local_queues = local_queues_;
  s.namespaces = namespaces_;
  for (const auto& [key, wl] : workloads_) s.workloads.push_back(wl);
  return s;
}

KueueController::Wrote KueueController::Write(const api::ResourceType& type, Cache& cache,
                                              Json object, bool status) {
  const std::string ns = Str(Field(object, "metadata"), "namespace");
  auto written = client_.Update(type, ns, std::move(object),
                                status ? api::Subresource::kStatus : api::Subresource::kNone);
  if (written.ok()) {
    cache[api::ObjectKey(*written)] = *written;
    return Wrote::kYes;
  }
  const Code code = written.status().code();
  return code == Code::kConflict || code == Code::kNotFound ? Wrote::kStale : Wrote::kFailed;
}

bool KueueController::ApplyPlan(const Plan& plan) {
  bool ok = true;
  const Time now = loop_.Now();
  for (const Admit& a : plan.admit) {
    auto it = workloads_.find(a.key);
    if (it == workloads_.end()) continue;
    Json wl = it->second;
    const std::string cq = Str(a.admission, "clusterQueue");
    wl["status"]["admission"] = a.admission;
    ak::SetCondition(wl, ak::kQuotaReserved, true, "QuotaReserved",
                     "Quota reserved in ClusterQueue " + cq, now);
    ak::SetCondition(wl, ak::kAdmitted, true, "Admitted", "The workload is admitted", now);
    for (const char* type : {ak::kEvicted, ak::kPreempted}) {
      if (const Json* c = ak::Condition(wl, type); c && Str(*c, "status") == "True") {
        ak::SetCondition(wl, type, false, "QuotaReserved", "Previously: " + Str(*c, "message"), now);
      }
    }
    const Wrote wrote = Write(ak::Workloads(), workloads_, std::move(wl), true);
    ok = ok && wrote != Wrote::kFailed;
    if (wrote != Wrote::kYes) continue;  // the next pass decides again
    (void)admission_events_->Record(workloads_[a.key], "Normal", "QuotaReserved", a.message);
    (void)admission_events_->Record(
        workloads_[a.key], "Normal", "Admitted",
        "Admitted by ClusterQueue " + cq + ", wait time since reservation was 0s");
  }
  for (const Evict& e : plan.evict) {
    auto it = workloads_.find(e.key);
    if (it == workloads_.end()) continue;
    Json wl = it->second;
    ak::SetCondition(wl, ak::kEvicted, true, "Preempted", e.message, now);
    ak::SetCondition(wl, ak::kPreempted, true, e.reason, e.message, now);
    const Wrote wrote = Write(ak::Workloads(), workloads_, wl, true);
    ok = ok && wrote != Wrote::kFailed;
    if (wrote != Wrote::kYes) continue;
    (void)admission_events_->Record(workloads_[e.key], "Normal", "Preempted", e.message);
    auto preemptor = workloads_.find(e.preemptor);
    if (preemptor != workloads_.end()) {
      (void)admission_events_->Record(
          preemptor->second, "Normal", "PreemptedWorkload",
          "Preempted workload " + e.key + " (UID: " + Str(FieldAt(wl, {"metadata"}), "uid") +
              ") in ClusterQueue " + Str(FieldAt(wl, {"status", "admission"}), "clusterQueue"));
    }
  }
  for (const Pending& p : plan.pending) {
    auto it = workloads_.find(p.key);
    if (it == workloads_.end()) continue;
    Json wl = it->second;
    if (!ak::SetCondition(wl, ak::kQuotaReserved, false, p.reason, p.message, now)) continue;
    const Wrote wrote = Write(ak::Workloads(), workloads_, std::move(wl), true);
    ok = ok && wrote != Wrote::kFailed;
    if (wrote == Wrote::kYes && p.reason == "Pending") {
      (void)admission_events_->Record(workloads_[p.key], "Warning", "Pending", p.message);
    }
  }
  return ok;
}

bool KueueController::SyncQueueStatuses() {
  bool ok = true;
  const Time now = loop_.Now();
  // Copies: a write replaces the cache's entry.
  for (const auto& [name, cq] : Cache(cluster_queues_)) {
    Json updated = cq;
    updated["status"] = ClusterQueueStatus(cq, workloads_, local_queues_, flavors_, now);
    if (updated == cq) continue;
    ok = Write(ak::ClusterQueues(), cluster_queues_, std::move(updated), true) != Wrote::kFailed &&
         ok;
  }
  for (const auto& [key, lq] : Cache(local_queues_)) {
    Json updated = lq;
    updated["status"] = LocalQueueStatus(lq, workloads_, cluster_queues_, flavors_, now);
    if (updated == lq) continue;
    ok = Write(ak::LocalQueues(), local_queues_, std::move(updated), true) != Wrote::kFailed && ok;
  }
  return ok;
}

}  // namespace pjemu::kueue
