#include "emulator/api/kueue.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/object_validation.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/api/selector.h"
#include "emulator/api/workload.h"
#include "emulator/common/strings.h"

namespace pjemu::api::kueue {

const ResourceType& ResourceFlavors() { return *FindResource(kGroup, "resourceflavors"); }
const ResourceType& ClusterQueues() { return *FindResource(kGroup, "clusterqueues"); }
const ResourceType& LocalQueues() { return *FindResource(kGroup, "localqueues"); }
const ResourceType& Workloads() { return *FindResource(kGroup, "workloads"); }
const ResourceType& WorkloadPriorityClasses() {
  return *FindResource(kGroup, "workloadpriorityclasses");
}

namespace {

using Type = FieldError::Type;

// Namespaces Kueue's job webhooks leave alone (its manifests' namespaceSelector).
bool WebhookSkips(const std::string& ns) { return ns == "kube-system" || ns == "kueue-system"; }

bool HasControllerOwner(const Json& object) {
  for (const Json& ref : ArrayOr(FieldAt(object, {"metadata", "ownerReferences"}))) {
    if (Field(ref, "controller") == Json(true)) return true;
  }
  return false;
}

std::string QueueLabel(const Json& object) {
  return Str(FieldAt(object, {"metadata", "labels"}), kQueueNameLabel);
}

}  // namespace

void MutateQueuedJob(const ResourceType& type, Json& job, const Json* old) {
  const Workload* w = type.workload;
  if (old != nullptr || w == nullptr || w->queue_framework == nullptr) return;
  if (WebhookSkips(Str(Field(job, "metadata"), "namespace"))) return;
  if (QueueLabel(job).empty() || HasControllerOwner(job)) return;
  w->set_suspended(job, true);
}

Status ValidateQueuedJob(const ResourceType& type, const Json& job, const Json* old) {
  const Workload* w = type.workload;
  if (w == nullptr || w->queue_framework == nullptr) return Status::Ok();
  if (WebhookSkips(Str(Field(job, "metadata"), "namespace"))) return Status::Ok();
  std::vector<FieldError> errs;
  const std::string field = std::string("metadata.labels[") + kQueueNameLabel + "]";
  const std::string queue = QueueLabel(job);
  if (!queue.empty()) {
    for (const std::string& problem : ValidateDns1123Subdomain(queue)) {
      errs.push_back({Type::kInvalid, field, GoQuote(queue), problem});
    }
  }
  if (old != nullptr && !w->suspended(*old) && QueueLabel(*old) != queue) {
    errs.push_back({Type::kInvalid, field, GoQuote(queue), "field is immutable"});
  }
  // Kueue's webhook for each framework is named after the kind: vjob.kb.io, vjobset.kb.io, ...
  return WebhookDenied(type, "v" + AsciiLower(type.kind) + ".kb.io", job, errs);
}

std::string WorkloadName(const std::string& kind, const std::string& group,
                         const std::string& name, const std::string& uid) {
  const std::string digest = Sha1Hex(kind + "\n" + group + "\n" + name + "\n" + uid);
  std::string prefix = AsciiLower(kind) + "-" + name;
  constexpr std::size_t kMaxPrefix = 247;
  if (prefix.size() > kMaxPrefix) prefix.resize(kMaxPrefix);
  return prefix + "-" + digest.substr(0, 5);
}

Json PodSetsJson(const std::vector<PodSet>& sets) {
  Json out = Json::array();
  for (const PodSet& s : sets) {
    out.push_back({{"name", s.name}, {"count", s.count}, {"template", s.pod_template}});
  }
  return out;
}

std::vector<PodSet> PodSetsOf(const Json& workload) {
  std::vector<PodSet> out;
  for (const Json& s : ArrayOr(FieldAt(workload, {"spec", "podSets"}))) {
    out.push_back({Str(s, "name"), OptInt(s, "count").value_or(1), Field(s, "template")});
  }
  return out;
}

Status Place(Json& pod_template, const PodSetPlacement& placement) {
  if (!pod_template.is_object()) pod_template = Json::object();
  Json& spec = pod_template["spec"];
  Json& selector = spec["nodeSelector"];
  if (!selector.is_object()) selector = Json::object();
  for (const auto& [key, value] : placement.node_selector) {
    if (selector.contains(key) && selector[key] != value) {
      return Status(Code::kInvalid, "conflict for nodeSelector: " + key);
    }
    selector[key] = value;
  }
  if (selector.empty()) spec.erase("nodeSelector");
  if (!placement.tolerations.empty()) {
    Json& tolerations = spec["tolerations"];
    if (!tolerations.is_array()) tolerations = Json::array();
    for (const Json& t : placement.tolerations) {
      if (std::find(tolerations.begin(), tolerations.end(), t) == tolerations.end()) {
        tolerations.push_back(t);
      }
    }
  }
  Json& meta = pod_template["metadata"];
  if (!meta.is_object()) meta = Json::object();
  for (const auto& [key, value] : placement.labels) meta["labels"][key] = value;
  for (const auto& [key, value] : placement.annotations) meta["annotations"][key] = value;
  return Status::Ok();
}

const Json* Condition(const Json& workload, const std::string& type) {
  for (const Json& c : ArrayOr(FieldAt(workload, {"status", "conditions"}))) {
    if (Str(c, "type") == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const Json& workload, const std::string& type) {
  const Json* c = Condition(workload, type);
  return c != nullptr && Str(*c, "status") == "True";
}

bool SetCondition(Json& workload, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, Time now) {
  Json& conditions = workload["status"]["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  const std::string value = status ? "True" : "False";
  for (Json& c : conditions) {
    if (Str(c, "type") != type) continue;
    bool changed = false;
    if (Str(c, "status") != value) {
      c["status"] = value;
      c["lastTransitionTime"] = FormatTime(now);
      changed = true;
    }
    for (const auto& [key, text] : {std::pair{"reason", reason}, std::pair{"message", message}}) {
      if (Str(c, key) != text) c[key] = text, changed = true;
    }
    return changed;
  }
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"reason", reason},
                        {"message", message},
                        {"lastTransitionTime", FormatTime(now)}});
  return true;
}

bool QueueOrderBefore(const Json& a, const Json& b) {
  const std::int64_t pa = OptInt(Field(a, "spec"), "priority").value_or(0);
  const std::int64_t pb = OptInt(Field(b, "spec"), "priority").value_or(0);
  if (pa != pb) return pa > pb;
  const std::string ta = Str(Field(a, "metadata"), "creationTimestamp");
  const std::string tb = Str(Field(b, "metadata"), "creationTimestamp");
  if (ta != tb) return ta < tb;
  return Str(Field(a, "metadata"), "uid") < Str(Field(b, "metadata"), "uid");
}

bool IsPending(const Json& wl) {
  return !FieldAt(wl, {"status", "admission"}).is_object() && !IsTrue(wl, kFinished) &&
         FieldAt(wl, {"spec", "active"}) != Json(false);
}

std::string LocalQueueKey(const Json& wl) {
  return Str(Field(wl, "metadata"), "namespace") + "/" + Str(Field(wl, "spec"), "queueName");
}

std::string ClusterQueueOf(const Json& wl, const std::map<std::string, Json>& local_queues) {
  const std::string reserved = Str(FieldAt(wl, {"status", "admission"}), "clusterQueue");
  if (!reserved.empty()) return reserved;
  auto lq = local_queues.find(LocalQueueKey(wl));
  return lq == local_queues.end() ? "" : Str(Field(lq->second, "spec"), "clusterQueue");
}

Json QuantityJson(const std::string& resource, std::int64_t amount) {
  if (resource == "cpu") return Quantity::FromMilli(amount, QuantityFormat::kDecimalSI).String();
  if (resource == "memory" || resource == "ephemeral-storage") {
    return Quantity::FromValue(amount, QuantityFormat::kBinarySI).String();
  }
  return Quantity::FromValue(amount, QuantityFormat::kDecimalSI).String();
}

ResourceList PodSetRequests(const PodSet& set) {
  auto requests = PodRequests(Json{{"spec", Field(set.pod_template, "spec")}});
  return requests.ok() ? *requests : ResourceList{};
}

}  // namespace pjemu::api::kueue
