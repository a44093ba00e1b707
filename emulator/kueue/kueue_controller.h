// KueueController: Kueue v0.19's manager in one actor: its job controllers (one per job kind
// whose descriptor has a QueueIntegration), its workload controller, its scheduler
// (admission.h decides) and its queue controllers. BEHAVIOUR.md lists what it does, point by
// point, with the tests that prove each.
//
// It follows, through one client::Informer each: the queued jobs of every integrated kind
// (label selector kueue.x-k8s.io/queue-name), Workloads, ClusterQueues, LocalQueues,
// ResourceFlavors, WorkloadPriorityClasses and Namespaces. Every change asks for one coalesced
// pass over everything, level-based, in three steps:
//  1. jobs: a queued job gets its Workload (CreatedWorkload); an admitted Workload starts its
//     suspended job with the flavors' placement (Started); an evicted one stops it (Stopped),
//     then gives its quota back once the job is suspended; a finished job finishes its
//     Workload (FinishedWorkload); a running job without admission is suspended;
//  2. the scheduler's plan (admission.h) written: admissions (QuotaReserved, Admitted),
//     preemptions (Evicted, Preempted; PreemptedWorkload), pending reasons (a Warning Pending
//     event when the message changes);
//  3. ClusterQueue and LocalQueue statuses (counts, flavors' reservation and usage, Active).
// Writes carry the resourceVersion read: a conflict waits for the informer's newer copy. A
// pass that met an error passes again after retry_interval; nothing else is timed.
// Thread safety: constructor, Start and Stop on the EventLoop thread (or before it runs);
// everything else runs on the EventLoop thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/coalesced_pass.h"
#include "emulator/common/event_loop.h"
#include "emulator/controller/event_recorder.h"
#include "emulator/controller/kind.h"
#include "emulator/kueue/admission.h"

namespace pjemu::kueue {

struct KueueControllerOptions {
  Duration retry_interval = 1s;
};

class KueueController {
 public:
  // kinds: the cluster's job kinds (kinds::All()); those with a QueueIntegration are queued.
  KueueController(client::Client& client, EventLoop& loop,
                  const std::vector<const controller::KindDescriptor*>& kinds,
                  KueueControllerOptions options = {});
  ~KueueController();  // Stop()
  KueueController(const KueueController&) = delete;
  KueueController& operator=(const KueueController&) = delete;

  // Starts the informers: the Client's errors.
  Status Start();
  void Stop();
  // One pass (what each change triggers).
  void SyncAll();

 private:
  using Cache = std::map<std::string, Json>;
  struct Kind {
    const api::ResourceType* type = nullptr;
    const controller::QueueIntegration* queue = nullptr;
    std::unique_ptr<controller::EventRecorder> recorder;  // "<framework>-kueue-controller"
    Cache jobs;
    std::unique_ptr<client::Informer> informer;
  };

  // Step 1 for one job; false on an error worth a retry.
  bool SyncJob(Kind& kind, const Json& job);
  bool CreateWorkload(Kind& kind, const Json& job);
  bool MoveWorkload(const Json& workload, const std::string& queue);
  bool StartJob(Kind& kind, const Json& job, const Json& workload);
  bool StopJob(Kind& kind, const Json& job, const std::string& message);
  bool RestoreJob(Kind& kind, const Json& job, const Json& workload);
  bool FinishWorkload(Kind& kind, const Json& job, const Json& workload);
  bool SyncWorkloadStatus(Kind& kind, const Json& job, const Json& workload);
  // Step 2.
  bool ApplyPlan(const Plan& plan);
  // Step 3.
  bool SyncQueueStatuses();
  // How a write went: written (the cache holds the answer), stale (a conflict, or the object
  // is gone: its informer brings what is newer), or failed (worth a retry).
  enum class Wrote { kYes, kStale, kFailed };
  // Writes `object` of `type` (only its status when `status`), with the resourceVersion read,
  // and keeps the answer in `cache`.
  Wrote Write(const api::ResourceType& type, Cache& cache, Json object, bool status);
  const Json* WorkloadOf(const Json& job) const;
  bool ManagedParent(const Json& job) const;
  Snapshot MakeSnapshot() const;

  client::Client& client_;
  EventLoop& loop_;
  KueueControllerOptions options_;
  std::vector<Kind> kinds_;
  Cache workloads_, cluster_queues_, local_queues_, flavors_, priority_classes_, namespaces_;
  // Each job's Workload key by the job's uid (the kueue.x-k8s.io/job-uid label), made at the
  // start of a pass from workloads_ and kept through its creations.
  std::map<std::string, std::string> workload_of_job_;
  std::vector<std::unique_ptr<client::Informer>> informers_;  // the Kueue objects, namespaces
  std::unique_ptr<controller::EventRecorder> admission_events_;  // "kueue-admission"
  CoalescedPass passes_{loop_, [this] { SyncAll(); }};
};

}  // namespace pjemu::kueue
