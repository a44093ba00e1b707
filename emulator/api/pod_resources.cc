#include "emulator/api/pod_resources.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/resource_quantity.h"

namespace pjemu::api {
namespace {

// Requests of one container, with limits filling missing requests.
Result<ResourceList> ContainerRequests(const Json& c, const std::string& path) {
  ResourceList out;
  if (!c.contains("resources") || !c["resources"].is_object()) return out;
  const Json& res = c["resources"];
  for (const char* kind : {"limits", "requests"}) {
    if (!res.contains(kind)) continue;
    auto list = ParseResourceList(res[kind]);
    if (!list.ok()) return list.status().WithContext(path + ".resources." + kind);
    for (auto& [k, v] : *list) out[k] = v;  // requests override limits
  }
  return out;
}

}  // namespace

Result<ResourceList> ParseResourceList(const Json& list) {
  ResourceList out;
  if (list.is_null()) return out;
  if (!list.is_object()) return Status(Code::kBadRequest, "must be a map of quantities");
  for (auto& [name, value] : list.items()) {
    auto q = Quantity::FromJson(value);
    if (!q.ok()) return q.status().WithContext("[" + name + "]");
    out[name] = name == "cpu" ? q->MilliValue() : q->Value();
  }
  return out;
}

std::int64_t ResourceAmount(const std::string& resource, const Json& quantity) {
  auto q = Quantity::FromJson(quantity);
  if (!q.ok()) return 0;
  return resource == "cpu" ? q->MilliValue() : q->Value();
}

Result<ResourceList> PodRequests(const Json& pod) {
  ResourceList sum;
  const Json& spec = ObjectOr(Field(pod, "spec"));  // read in place: every pod's admission asks
  const Json& containers = ArrayOr(Field(spec, "containers"));
  for (std::size_t i = 0; i < containers.size(); ++i) {
    ASSIGN_OR_RETURN(ResourceList r, ContainerRequests(containers[i], "spec.containers[" +
                                                                          std::to_string(i) + "]"));
    for (auto& [k, v] : r) sum[k] += v;
  }
  const Json& inits = ArrayOr(Field(spec, "initContainers"));
  for (std::size_t i = 0; i < inits.size(); ++i) {
    ASSIGN_OR_RETURN(ResourceList r,
                     ContainerRequests(inits[i], "spec.initContainers[" + std::to_string(i) + "]"));
    for (auto& [k, v] : r) sum[k] = std::max(sum[k], v);
  }
  return sum;
}

ResourceList ContainerLimits(const Json& container) {
  if (!container.contains("resources") || !container["resources"].is_object()) return {};
  auto limits = ParseResourceList(ObjectOr(Field(container["resources"], "limits")));
  return limits.ok() ? *limits : ResourceList{};
}

ResourceList ContainerRequests(const Json& container) {
  if (!container.contains("resources") || !container["resources"].is_object()) return {};
  auto requests = ParseResourceList(ObjectOr(Field(container["resources"], "requests")));
  if (!requests.ok()) return {};
  for (const auto& [name, amount] : ContainerLimits(container)) requests->emplace(name, amount);
  return *requests;
}

void QuantityList::Add(const Json& list, std::int64_t times) {
  if (!list.is_object()) return;
  for (const auto& [name, value] : list.items()) {
    Result<Quantity> q = Quantity::FromJson(value);
    if (!q.ok()) continue;
    auto [it, added] = amounts_.try_emplace(name, Amount{0, q->format()});
    it->second.milli += q->MilliValue() * times;
  }
}

void QuantityList::Add(const QuantityList& other, std::int64_t times) {
  for (const auto& [name, amount] : other.amounts_) {
    auto [it, added] = amounts_.try_emplace(name, Amount{0, amount.format});
    it->second.milli += amount.milli * times;
  }
}

void QuantityList::Max(const QuantityList& other) {
  for (const auto& [name, amount] : other.amounts_) {
    auto it = amounts_.find(name);
    if (it == amounts_.end() || amount.milli > it->second.milli) amounts_[name] = amount;
  }
}

Json QuantityList::ToJson() const {
  Json out = Json::object();
  for (const auto& [name, amount] : amounts_) {
    out[name] = Quantity::FromMilli(amount.milli, amount.format).String();
  }
  return out;
}

QuantityList PodSpecRequests(const Json& pod_spec) {
  auto requests = [](const Json& c) {
    QuantityList r;
    r.Add(FieldAt(c, {"resources", "requests"}));
    return r;
  };
  QuantityList pod;
  for (const Json& c : ArrayOr(Field(pod_spec, "containers"))) pod.Add(requests(c));
  QuantityList sidecars, inits;
  for (const Json& c : ArrayOr(Field(pod_spec, "initContainers"))) {
    QuantityList at_start = requests(c);
    if (Str(c, "restartPolicy") == "Always") {
      pod.Add(at_start);
      sidecars.Add(at_start);
      at_start = sidecars;
    } else {
      at_start.Add(sidecars);
    }
    inits.Max(at_start);
  }
  pod.Max(inits);
  pod.Add(Field(pod_spec, "overhead"));
  return pod;
}

std::string PodQosClass(const Json& pod) {
  const Json& spec = ObjectOr(Field(pod, "spec"));  // read in place: every status write asks
  bool any = false, guaranteed = true;
  for (const char* field : {"initContainers", "containers"}) {
    for (const Json& c : ArrayOr(Field(spec, field))) {
      const Json& res = ObjectOr(Field(c, "resources"));
      auto limits = ParseResourceList(ObjectOr(Field(res, "limits")));
      auto requests = ParseResourceList(ObjectOr(Field(res, "requests")));
      if (!limits.ok() || !requests.ok()) continue;
      for (const ResourceList* l : {&*limits, &*requests}) {
        for (auto& [k, v] : *l) {
          if ((k == "cpu" || k == "memory") && v > 0) any = true;
        }
      }
      for (const char* r : {"cpu", "memory"}) {
        auto lim = limits->find(r);
        if (lim == limits->end()) {
          guaranteed = false;
          continue;
        }
        auto req = requests->find(r);
        if (req != requests->end() && req->second != lim->second) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

}  // namespace pjemu::api
