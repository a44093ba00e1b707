// runPolicy rules and pod accounting of job_status.h: cleanPodPolicy, backoffLimit,
// activeDeadlineSeconds, ttlSecondsAfterFinished, replica slices and counts.
#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/pod_status.h"
#include "emulator/controller/children.h"
#include "emulator/pytorchjob/conditions.h"
#include "emulator/pytorchjob/job_spec.h"
#include "emulator/pytorchjob/job_status.h"
#include "emulator/common/strings.h"

namespace pjemu::pytorchjob {

using api::Deleting, api::kDefaultContainerName, api::kReplicaIndexLabel, api::kReplicaTypeLabel;
using api::Field, api::IsFinished, api::IsSuspended, api::OptInt, api::ReplicaSpec,
    api::ReplicaTypes, api::RestartPolicy, api::Str;
using controller::ContainerExitCode, controller::IndexLabel, controller::PodRestarts;

namespace {

const Json& RunPolicyOf(const Json& job) { return Field(Field(job, "spec"), "runPolicy"); }

std::int64_t Get(const Json& rs, const char* key) { return OptInt(rs, key).value_or(0); }

void Set(Json& rs, const char* key, std::int64_t v) {
  if (v == 0) {
    rs.erase(key);
  } else {
    rs[key] = v;
  }
}

}  // namespace

std::vector<std::string> PodsToCleanUp(const Json& job, const Json& status,
                                       const api::ObjectList& pods) {
  std::vector<std::string> out;
  const std::string policy = Str(RunPolicyOf(job), "cleanPodPolicy");
  const bool finished = IsFinished(status);
  if (finished && policy == "None") return out;
  for (const Json& pod : pods) {
    const std::string phase = api::PodPhase(pod);
    if (finished && policy == "Running" && phase != "Running" && phase != "Pending") continue;
    out.push_back(Str(Field(pod, "metadata"), "name"));
  }
  return out;
}

bool PastBackoffLimit(const Json& job, const api::ObjectList& pods) {
  auto limit = OptInt(RunPolicyOf(job), "backoffLimit");
  if (!limit) return false;
  std::int64_t restarts = 0;
  for (const std::string& rtype : ReplicaTypes(job)) {
    const std::string policy = RestartPolicy(ReplicaSpec(job, rtype));
    if (policy != "OnFailure" && policy != "Always" && policy != "ExitCode") continue;
    for (const Json& pod : FilterForReplicaType(pods, rtype)) {
      if (api::PodPhase(pod) == "Running") restarts += PodRestarts(pod);
    }
  }
  if (*limit == 0) return restarts > 0;
  return restarts >= *limit;
}

bool PastActiveDeadline(const Json& job, const Json& status, Time now) {
  auto ads = OptInt(RunPolicyOf(job), "activeDeadlineSeconds");
  auto start = ParseTime(Str(status, "startTime"));
  if (!ads || !start) return false;
  return now - *start >= std::chrono::seconds(*ads);
}

TtlDecision CleanupJob(const Json& job, const Json& status, Time now) {
  TtlDecision d;
  auto ttl = OptInt(RunPolicyOf(job), "ttlSecondsAfterFinished");
  if (!ttl || IsSuspended(job)) return d;
  auto finish = ParseTime(Str(status, "completionTime"));
  if (!finish) {
    d.error = Status(Code::kInternal, "job completion time is nil, cannot cleanup");
    return d;
  }
  Time expire = *finish + std::chrono::seconds(*ttl);
  // Upstream deletes when now is strictly after the expiry; its clock has always moved on by the
  // next reconcile, so pjemu's virtual clock deletes at the expiry itself.
  if (now >= expire) {
    d.delete_job = true;
  } else {
    d.requeue_after = expire - now;
  }
  return d;
}

api::ObjectList FilterForReplicaType(const api::ObjectList& objects, const std::string& rtype) {
  api::ObjectList out;
  const std::string rt = AsciiLower(rtype);
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (Str(Field(Field(objects[i], "metadata"), "labels"), kReplicaTypeLabel) == rt) {
      out.push_back(objects.ptr(i));
    }
  }
  return out;
}

std::int64_t SliceSize(const api::ObjectList& objects, std::int64_t replicas) {
  std::int64_t size = replicas;
  for (const Json& o : objects) {
    if (auto i = IndexLabel(o, kReplicaIndexLabel)) size = std::max(size, *i + 1);
  }
  return size;
}

void CountPod(Json& rs, const Json& pod) {
  const std::string phase = api::PodPhase(pod);
  if (phase == "Running") {
    if (Deleting(pod)) {
      Set(rs, "failed", Get(rs, "failed") + 1);
    } else {
      Set(rs, "active", Get(rs, "active") + 1);
    }
  } else if (phase == "Succeeded") {
    Set(rs, "succeeded", Get(rs, "succeeded") + 1);
  } else if (phase == "Failed") {
    Set(rs, "failed", Get(rs, "failed") + 1);
  }
}

std::int64_t PytorchExitCode(const Json& pod) {
  return ContainerExitCode(pod, kDefaultContainerName).value_or(0xbeef);
}

}  // namespace pjemu::pytorchjob
