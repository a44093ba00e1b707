#include "emulator/kueue/queue_status.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/common/strings.h"
#include "emulator/kueue/admission.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
using api::ArrayOr, api::Field, api::FieldAt, api::Str;

struct Counts {
  std::int64_t pending = 0, reserving = 0, admitted = 0;
  Usage reserved, used;  // flavor -> resource -> amount
};

bool Finished(const Json& wl) { return ak::IsTrue(wl, ak::kFinished); }

void Count(Counts& c, const Json& wl) {
  if (Finished(wl)) return;
  const Json& admission = FieldAt(wl, {"status", "admission"});
  if (!admission.is_object()) {
    if (ak::IsPending(wl)) ++c.pending;
    return;
  }
  ++c.reserving;
  const Usage u = AdmissionUsage(admission);
  for (const auto& [f, rs] : u) {
    for (const auto& [r, a] : rs) c.reserved[f][r] += a;
  }
  if (!ak::IsTrue(wl, ak::kAdmitted)) return;
  ++c.admitted;
  for (const auto& [f, rs] : u) {
    for (const auto& [r, a] : rs) c.used[f][r] += a;
  }
}

// {name, resources[{name, total, borrowed}]} for every flavor and resource the queue lists.
Json FlavorsList(const Json& cq, const Usage& usage) {
  Json out = Json::array();
  for (const Json& g : ArrayOr(FieldAt(cq, {"spec", "resourceGroups"}))) {
    for (const Json& f : ArrayOr(Field(g, "flavors"))) {
      const std::string flavor = Str(f, "name");
      Json resources = Json::array();
      for (const Json& r : ArrayOr(Field(f, "resources"))) {
        const std::string res = Str(r, "name");
        std::int64_t total = 0;
        if (auto it = usage.find(flavor); it != usage.end() && it->second.count(res)) {
          total = it->second.at(res);
        }
        const std::int64_t quota = api::ResourceAmount(res, Field(r, "nominalQuota"));
        resources.push_back({{"name", res},
                             {"total", ak::QuantityJson(res, total)},
                             {"borrowed", ak::QuantityJson(res, std::max<std::int64_t>(0, total - quota))}});
      }
      out.push_back({{"name", flavor}, {"resources", resources}});
    }
  }
  return out;
}

void PutActive(Json& status, const Json& old_status, bool active, const std::string& reason,
               const std::string& message, Time now) {
  Json holder = {{"status", old_status.is_object() ? old_status : Json::object()}};
  ak::SetCondition(holder, "Active", active, reason, message, now);
  status["conditions"] = holder["status"]["conditions"];
}

}  // namespace

Json ClusterQueueStatus(const Json& cq, const std::map<std::string, Json>& workloads,
                        const std::map<std::string, Json>& local_queues,
                        const std::map<std::string, Json>& flavors, Time now) {
  const std::string name = Str(Field(cq, "metadata"), "name");
  Counts c;
  for (const auto& [key, wl] : workloads) {
    if (ak::ClusterQueueOf(wl, local_queues) == name) Count(c, wl);
  }
  Json status = {{"pendingWorkloads", c.pending},
                 {"reservingWorkloads", c.reserving},
                 {"admittedWorkloads", c.admitted},
                 {"flavorsReservation", FlavorsList(cq, c.reserved)},
                 {"flavorsUsage", FlavorsList(cq, c.used)}};
  const std::vector<std::string> why = InactiveReasons(cq, flavors);
  const bool stopped = !why.empty() && why.front() == "is stopped";
  PutActive(status, Field(cq, "status"), why.empty(),
            why.empty() ? "Ready" : stopped ? "Stopped" : "FlavorNotFound",
            why.empty() ? "Can admit new workloads"
                        : "Can't admit new workloads: " + Join(why, ", ") + ".",
            now);
  return status;
}

Json LocalQueueStatus(const Json& lq, const std::map<std::string, Json>& workloads,
                      const std::map<std::string, Json>& cluster_queues,
                      const std::map<std::string, Json>& flavors, Time now) {
  const std::string ns = Str(Field(lq, "metadata"), "namespace");
  const std::string name = Str(Field(lq, "metadata"), "name");
  Counts c;
  for (const auto& [key, wl] : workloads) {
    if (Str(Field(wl, "metadata"), "namespace") == ns && Str(Field(wl, "spec"), "queueName") == name) {
      Count(c, wl);
    }
  }
  const std::string cq_name = Str(Field(lq, "spec"), "clusterQueue");
  auto cq = cluster_queues.find(cq_name);
  const Json& cq_object = cq == cluster_queues.end() ? Json() : cq->second;
  Json status = {{"pendingWorkloads", c.pending},
                 {"reservingWorkloads", c.reserving},
                 {"admittedWorkloads", c.admitted},
                 {"flavorsReservation", FlavorsList(cq_object, c.reserved)},
                 {"flavorsUsage", FlavorsList(cq_object, c.used)}};
  const std::string stop = Str(Field(lq, "spec"), "stopPolicy");
  if (!stop.empty() && stop != "None") {
    PutActive(status, Field(lq, "status"), false, "Stopped", "LocalQueue is stopped", now);
  } else if (cq == cluster_queues.end()) {
    PutActive(status, Field(lq, "status"), false, "ClusterQueueDoesNotExist",
              "Can't submit new workloads to clusterQueue", now);
  } else if (!InactiveReasons(cq->second, flavors).empty()) {
    PutActive(status, Field(lq, "status"), false, "ClusterQueueIsInactive",
              "Can't submit new workloads to clusterQueue", now);
  } else {
    PutActive(status, Field(lq, "status"), true, "Ready", "Can submit new workloads to localQueue", now);
  }
  return status;
}

}  // namespace pjemu::kueue
