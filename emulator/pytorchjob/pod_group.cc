#include "emulator/pytorchjob/pod_group.h"

#include <algorithm>
#include <cctype>

#include "emulator/api/job_conditions.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/pod_resources.h"
#include "emulator/api/podgroup.h"
#include "emulator/api/pytorchjob.h"
#include "emulator/common/strings.h"

namespace pjemu::pytorchjob {
namespace {

using api::Field;
using api::FieldAt;
using api::Str;

const Json& SchedulingPolicy(const Json& job) {
  return FieldAt(job, {"spec", "runPolicy", "schedulingPolicy"});
}

int Replicas(const Json& job, const std::string& rtype) {
  const Json& r = Field(api::ReplicaSpec(job, rtype), "replicas");
  return r.is_number_integer() ? r.get<int>() : 1;
}

int MinMember(const Json& job) {
  const Json& min = Field(SchedulingPolicy(job), "minAvailable");
  if (min.is_number_integer()) return min.get<int>();
  int total = 0;
  for (const std::string& rtype : api::ReplicaTypes(job)) total += Replicas(job, rtype);
  return total;
}

// The requests (limits where a container has none) of the first min_member pods.
Json ComputedMinResources(const Json& job, int min_member) {
  api::QuantityList sum;
  int taken = 0;
  for (const std::string& rtype : api::ReplicaTypes(job)) {
    const Json& containers =
        api::ArrayOr(FieldAt(api::ReplicaSpec(job, rtype), {"template", "spec", "containers"}));
    for (int i = 0; i < Replicas(job, rtype) && taken < min_member; ++i, ++taken) {
      for (const Json& c : containers) {
        const Json& requests = FieldAt(c, {"resources", "requests"});
        sum.Add(requests.is_object() ? requests : FieldAt(c, {"resources", "limits"}));
      }
    }
  }
  return sum.ToJson();
}

}  // namespace

bool GangOptions::volcano() const { return AsciiLower(scheduler_name) == "volcano"; }

const api::ResourceType& GangOptions::type() const {
  return volcano() ? api::VolcanoPodGroups() : api::SchedulerPluginsPodGroups();
}

std::string GangOptions::pod_scheduler_name() const {
  return api::GangPodSchedulerName(scheduler_name);
}

Json DesiredPodGroup(const Json& job, const GangOptions& gang) {
  const Json& meta = Field(job, "metadata");
  const Json& policy = SchedulingPolicy(job);
  const int min = MinMember(job);
  Json spec = {{"minMember", min}};
  const Json& min_resources = Field(policy, "minResources");
  spec["minResources"] = min_resources.is_object() ? min_resources : ComputedMinResources(job, min);
  if (gang.volcano()) {
    spec["queue"] = Str(policy, "queue").empty() ? "default" : Str(policy, "queue");
    if (!Str(policy, "priorityClass").empty())
      spec["priorityClassName"] = Str(policy, "priorityClass");
  } else if (const Json& t = Field(policy, "scheduleTimeoutSeconds"); t.is_number_integer()) {
    spec["scheduleTimeoutSeconds"] = t;
  }
  Json metadata = {{"name", Str(meta, "name")},
                   {"namespace", Str(meta, "namespace")},
                   {"ownerReferences",
                    {{{"apiVersion", "kubeflow.org/v1"},
                      {"kind", "PyTorchJob"},
                      {"name", Str(meta, "name")},
                      {"uid", Str(meta, "uid")},
                      {"controller", true},
                      {"blockOwnerDeletion", true}}}}};
  if (Field(meta, "annotations").is_object()) metadata["annotations"] = meta["annotations"];
  return {{"apiVersion", gang.type().ApiVersion()},
          {"kind", "PodGroup"},
          {"metadata", metadata},
          {"spec", spec}};
}

Status SyncPodGroup(client::Client& client, controller::EventRecorder& recorder, const Json& job,
                    const GangOptions& gang) {
  if (!gang.enabled()) return Status::Ok();
  const std::string ns = Str(Field(job, "metadata"), "namespace");
  const std::string name = Str(Field(job, "metadata"), "name");
  if (api::IsFinished(Field(job, "status")) || api::IsSuspended(job)) {
    Result<Json> current = client.Get(gang.type(), ns, name);
    if (!current.ok()) return Status::Ok();  // gone already
    (void)recorder.Record(job, "Normal", "JobTerminated",
                          "Job has been terminated. Deleting PodGroup");
    Result<Json> deleted = client.Delete(gang.type(), ns, name);
    if (!deleted.ok() && deleted.status().code() != Code::kNotFound) {
      (void)recorder.Record(job, "Warning", "FailedDeletePodGroup",
                            "Error deleting: " + deleted.status().message());
      return deleted.status();
    }
    (void)recorder.Record(job, "Normal", "SuccessfulDeletePodGroup", "Deleted PodGroup: " + name);
    return Status::Ok();
  }
  Json desired = DesiredPodGroup(job, gang);
  Result<Json> current = client.Get(gang.type(), ns, name);
  if (!current.ok()) {
    if (current.status().code() != Code::kNotFound) return current.status();
    return client.Create(gang.type(), ns, desired).status();
  }
  if (gang.volcano() && !Str(Field(*current, "spec"), "queue").empty())
    desired["spec"]["queue"] = current->at("spec").at("queue");  // an existing queue wins
  if (Field(*current, "spec") == desired["spec"]) return Status::Ok();
  Json updated = *current;
  updated["spec"] = desired["spec"];
  return client.Update(gang.type(), ns, updated).status();
}

Json WithGang(Json pod, const Json& job, const GangOptions& gang,
              controller::EventRecorder& recorder) {
  if (!gang.enabled()) return pod;
  const std::string name = Str(Field(job, "metadata"), "name");
  Json& spec = pod["spec"];
  const std::string named = spec.is_object() ? spec.value("schedulerName", "") : "";
  if (named.empty()) {
    spec["schedulerName"] = gang.pod_scheduler_name();
  } else if (named != gang.pod_scheduler_name()) {
    (void)recorder.Record(job, "Warning", "SetPodTemplateSchedulerName",
                          "Another scheduler is specified when gang-scheduling is enabled and it "
                          "will not be overwritten");
  }
  Json& meta = pod["metadata"];
  if (gang.volcano()) {
    meta["annotations"][api::kVolcanoGroupAnnotation] = name;
    meta["annotations"][api::kVolcanoTaskSpecAnnotation] =
        AsciiLower(Str(Field(meta, "labels"), api::kReplicaTypeLabel));
  } else {
    meta["labels"][api::kPodGroupLabel] = name;
  }
  return pod;
}

}  // namespace pjemu::pytorchjob
