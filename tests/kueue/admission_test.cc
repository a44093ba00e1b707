// Kueue's scheduler as a pure function: which pending Workloads get quota, in which order,
// which are preempted, and what the others are told (emulator/kueue/admission.h).
#include "emulator/kueue/admission.h"

#include <catch2/catch.hpp>

#include "emulator/api/kueue.h"

namespace pjemu::kueue {
namespace {

namespace ak = api::kueue;
const Time kNow = ParseTime("2026-11-29T10:00:00Z").value();

Json Flavor(const std::string& name, Json spec = Json::object()) {
  return {{"metadata", {{"name", name}}}, {"spec", spec}};
}

// A queue with one resource group: gpu (and cpu) in the given flavors, each with `gpus` GPUs
// and 100 CPUs.
Json Queue(const std::string& name, std::vector<std::string> flavors, int gpus,
           Json extra = Json::object()) {
  Json fl = Json::array();
  for (const std::string& f : flavors) {
    fl.push_back({{"name", f},
                  {"resources", {{{"name", "cpu"}, {"nominalQuota", "100"}},
                                 {{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}}}});
  }
  Json cq = {{"metadata", {{"name", name}}},
             {"spec", {{"namespaceSelector", Json::object()},
                       {"queueingStrategy", "BestEffortFIFO"},
                       {"resourceGroups", {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
                                            {"flavors", fl}}}}}}};
  cq["spec"].update(extra);
  return cq;
}

Json LocalQueue(const std::string& name, const std::string& cq) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}}}, {"spec", {{"clusterQueue", cq}}}};
}

// A pending Workload of one pod set of `count` pods with `gpus` GPUs each, created at
// kNow - age seconds.
Json Wl(const std::string& name, int gpus, int age, int priority = 0, int count = 1,
        Json pod_spec = Json::object()) {
  pod_spec["containers"] = {{{"name", "c"}, {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}}}}};
  return {{"metadata", {{"name", name},
                        {"namespace", "default"},
                        {"uid", "uid-" + name},
                        {"creationTimestamp", FormatTime(kNow - std::chrono::seconds(age))}}},
          {"spec", {{"queueName", "lq"},
                    {"priority", priority},
                    {"podSets", {{{"name", "main"}, {"count", count}, {"template", {{"spec", pod_spec}}}}}}}}};
}

// wl admitted to `cq` on flavor `flavor` (reserved `reserved_age` seconds ago).
Json Admitted(Json wl, const std::string& cq, const std::string& flavor, int reserved_age = 60) {
  int gpus = wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"];
  int count = wl["spec"]["podSets"][0]["count"];
  wl["status"]["admission"] = {
      {"clusterQueue", cq},
      {"podSetAssignments", {{{"name", "main"},
                              {"count", count},
                              {"flavors", {{"nvidia.com/gpu", flavor}}},
                              {"resourceUsage", {{"nvidia.com/gpu", std::to_string(gpus * count)}}}}}}};
  ak::SetCondition(wl, ak::kQuotaReserved, true, "QuotaReserved", "",
                   kNow - std::chrono::seconds(reserved_age));
  ak::SetCondition(wl, ak::kAdmitted, true, "Admitted", "", kNow - std::chrono::seconds(reserved_age));
  return wl;
}

Snapshot Cluster(Json cq, std::vector<Json> workloads) {
  Snapshot s;
  s.flavors = {{"gpu", Flavor("gpu")}, {"gpu-b", Flavor("gpu-b")}};
  s.cluster_queues = {{cq["metadata"]["name"], cq}};
  s.local_queues = {{"default/lq", LocalQueue("lq", cq["metadata"]["name"])}};
  s.namespaces = {{"default", {{"metadata", {{"name", "default"}, {"labels", {{"team", "a"}}}}}}}};
  s.workloads = std::move(workloads);
  return s;
}

std::vector<std::string> AdmittedKeys(const Plan& p) {
  std::vector<std::string> out;
  for (const Admit& a : p.admit) out.push_back(a.key);
  return out;
}

const Pending* PendingOf(const Plan& p, const std::string& key) {
  for (const Pending& x : p.pending) {
    if (x.key == key) return &x;
  }
  return nullptr;
}

TEST_CASE("quota: never more than the nominal quota, in priority then creation order",
          "[kueue][admission]") {
  Plan p = Schedule(Cluster(Queue("cq", {"gpu"}, 2),
                            {Wl("young", 1, 10), Wl("old", 1, 30), Wl("middle", 1, 20)}),
                    kNow);
  CHECK(AdmittedKeys(p) == std::vector<std::string>{"default/old", "default/middle"});
  REQUIRE(PendingOf(p, "default/young"));
  CHECK(PendingOf(p, "default/young")->reason == "Pending");
  CHECK(PendingOf(p, "default/young")->message ==
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
        "flavor gpu, 1 more needed");
  CHECK(p.admit[0].message == "Quota reserved in ClusterQueue cq, wait time since queued was 30s");
  CHECK(p.admit[0].admission == Json::parse(R"({"clusterQueue":"cq","podSetAssignments":[
        {"name":"main","count":1,"flavors":{"nvidia.com/gpu":"gpu"},
         "resourceUsage":{"nvidia.com/gpu":"1"}}]})"));
  // A higher priority goes first whatever its age.
  p = Schedule(Cluster(Queue("cq", {"gpu"}, 1), {Wl("old", 1, 30), Wl("urgent", 1, 1, 100)}), kNow);
  CHECK(AdmittedKeys(p) == std::vector<std::string>{"default/urgent"});
}

TEST_CASE("quota: admitted Workloads hold theirs until they finish", "[kueue][admission]") {
  Json finished = Admitted(Wl("done", 2, 90), "cq", "gpu");
  ak::SetCondition(finished, ak::kFinished, true, "Succeeded", "", kNow);
  Plan p = Schedule(Cluster(Queue("cq", {"gpu"}, 2),
                            {Admitted(Wl("running", 1, 60), "cq", "gpu"), finished,
                             Wl("next", 1, 10), Wl("after", 1, 5)}),
                    kNow);
  CHECK(AdmittedKeys(p) == std::vector<std::string>{"default/next"});
}

TEST_CASE("strategy: BestEffortFIFO admits past a head that does not fit, StrictFIFO waits",
          "[kueue][admission]") {
  std::vector<Json> wls = {Admitted(Wl("running", 1, 60), "cq", "gpu"), Wl("big", 2, 30),
                           Wl("small", 1, 10)};
  Plan best = Schedule(Cluster(Queue("cq", {"gpu"}, 2), wls), kNow);
  CHECK(AdmittedKeys(best) == std::vector<std::string>{"default/small"});
  Plan strict = Schedule(
      Cluster(Queue("cq", {"gpu"}, 2, {{"queueingStrategy", "StrictFIFO"}}), wls), kNow);
  CHECK(strict.admit.empty());
  CHECK(PendingOf(strict, "default/big"));
  CHECK_FALSE(PendingOf(strict, "default/small"));
}

TEST_CASE("flavors: in order, skipping taints not tolerated and contradicting labels",
          "[kueue][admission]") {
  Snapshot s = Cluster(Queue("cq", {"gpu", "gpu-b"}, 1), {Wl("w", 1, 10)});
  s.flavors["gpu"] = Flavor("gpu", {{"nodeTaints", {{{"key", "spot"}, {"value", "true"}, {"effect", "NoSchedule"}}}}});
  Plan p = Schedule(s, kNow);
  REQUIRE(p.admit.size() == 1);
  CHECK(p.admit[0].admission["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"] == "gpu-b");
  // Both unusable: each reason, sorted.
  s.flavors["gpu-b"] = Flavor("gpu-b", {{"nodeLabels", {{"pool", "b"}}}});
  s.workloads = {Wl("w", 1, 10, 0, 1, {{"nodeSelector", {{"pool", "a"}}}})};
  p = Schedule(s, kNow);
  REQUIRE(PendingOf(p, "default/w"));
  CHECK(PendingOf(p, "default/w")->message ==
        "couldn't assign flavors to pod set main: flavor gpu-b doesn't match node affinity, "
        "untolerated taint spot=true:NoSchedule in flavor gpu");
  // A toleration in the pod set lets it use the tainted flavor.
  s.workloads = {Wl("w", 1, 10, 0, 1,
                    {{"nodeSelector", {{"pool", "a"}}},
                     {"tolerations", {{{"key", "spot"}, {"operator", "Exists"}}}}})};
  CHECK(AdmittedKeys(Schedule(s, kNow)) == std::vector<std::string>{"default/w"});
}

TEST_CASE("quota: more than the queue could ever hold, or a resource it does not cover",
          "[kueue][admission]") {
  Plan p = Schedule(Cluster(Queue("cq", {"gpu"}, 2), {Wl("huge", 2, 10, 0, 2)}), kNow);
  REQUIRE(PendingOf(p, "default/huge"));
  CHECK(PendingOf(p, "default/huge")->message ==
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
        "gpu, previously considered podsets requests (0) + current podset request (4) > maximum "
        "capacity (2)");
  Json wl = Wl("mem", 1, 10);
  wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] = {{"memory", "1Gi"}};
  p = Schedule(Cluster(Queue("cq", {"gpu"}, 2), {wl}), kNow);
  REQUIRE(PendingOf(p, "default/mem"));
  CHECK(PendingOf(p, "default/mem")->message ==
        "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue");
}

TEST_CASE("blockers: queues missing or stopped, flavors missing, namespaces not selected",
          "[kueue][admission]") {
  Snapshot s = Cluster(Queue("cq", {"gpu"}, 2), {Wl("w", 1, 10)});
  s.local_queues.clear();
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->message == "LocalQueue lq doesn't exist");
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->reason == "Inadmissible");
  s = Cluster(Queue("cq", {"gpu"}, 2), {Wl("w", 1, 10)});
  s.local_queues["default/lq"] = LocalQueue("lq", "nope");
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->message == "ClusterQueue nope doesn't exist");
  s = Cluster(Queue("cq", {"missing"}, 2), {Wl("w", 1, 10)});
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->message == "ClusterQueue cq is inactive");
  CHECK(InactiveReasons(s.cluster_queues["cq"], s.flavors) ==
        std::vector<std::string>{"references missing ResourceFlavor(s): missing"});
  Json no_selector = Queue("cq", {"gpu"}, 2);
  no_selector["spec"].erase("namespaceSelector");  // null selects no namespace
  s = Cluster(no_selector, {Wl("w", 1, 10)});
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->message ==
        "workload namespace doesn't match ClusterQueue selector");
  s = Cluster(Queue("cq", {"gpu"}, 2, {{"namespaceSelector", {{"matchLabels", {{"team", "b"}}}}}}),
              {Wl("w", 1, 10)});
  CHECK(PendingOf(Schedule(s, kNow), "default/w")->reason == "Pending");
  s = Cluster(Queue("cq", {"gpu"}, 2, {{"namespaceSelector", {{"matchLabels", {{"team", "a"}}}}}}),
              {Wl("w", 1, 10)});
  CHECK(AdmittedKeys(Schedule(s, kNow)) == std::vector<std::string>{"default/w"});
}

TEST_CASE("preemption: lower priority, most recently admitted first, no more than needed",
          "[kueue][admission]") {
  Json cq = Queue("cq", {"gpu"}, 3, {{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  std::vector<Json> wls = {Admitted(Wl("low-old", 1, 300), "cq", "gpu", 300),
                           Admitted(Wl("low-new", 1, 200), "cq", "gpu", 100),
                           Admitted(Wl("equal", 1, 250, 50), "cq", "gpu", 200),
                           Wl("high", 1, 5, 50)};
  Plan p = Schedule(Cluster(cq, wls), kNow);
  CHECK(p.admit.empty());
  REQUIRE(p.evict.size() == 1);
  CHECK(p.evict[0].key == "default/low-new");
  CHECK(p.evict[0].preemptor == "default/high");
  CHECK(p.evict[0].reason == "InClusterQueue");
  CHECK(p.evict[0].message ==
        "Preempted to accommodate a workload (UID: uid-high, JobUID: ) due to prioritization in "
        "the ClusterQueue; preemptor path: /cq; preemptee path: /cq");
  CHECK(PendingOf(p, "default/high")->message ==
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
        "flavor gpu, 1 more needed. Pending the preemption of 1 workload(s)");
  // Never: no victims, the Workload waits.
  cq["spec"]["preemption"]["withinClusterQueue"] = "Never";
  p = Schedule(Cluster(cq, wls), kNow);
  CHECK(p.evict.empty());
  // LowerOrNewerEqualPriority also takes an equal priority admitted later than the preemptor
  // was created... none here is newer than "high", so it takes the lower ones again.
  cq["spec"]["preemption"]["withinClusterQueue"] = "LowerOrNewerEqualPriority";
  p = Schedule(Cluster(cq, wls), kNow);
  REQUIRE(p.evict.size() == 1);
  CHECK(p.evict[0].key == "default/low-new");
}

TEST_CASE("preemption: a victim already evicted is waited for, not evicted again",
          "[kueue][admission]") {
  Json cq = Queue("cq", {"gpu"}, 1, {{"preemption", {{"withinClusterQueue", "LowerPriority"}}}});
  Json victim = Admitted(Wl("low", 1, 300), "cq", "gpu");
  ak::SetCondition(victim, ak::kEvicted, true, "Preempted", "", kNow);
  Plan p = Schedule(Cluster(cq, {victim, Wl("high", 1, 5, 50)}), kNow);
  CHECK(p.evict.empty());
  CHECK(p.admit.empty());
  CHECK(PendingOf(p, "default/high")->message.find("Pending the preemption of 1 workload(s)") !=
        std::string::npos);
}

TEST_CASE("preemption: reclaiming within the cohort takes back quota another queue borrows",
          "[kueue][admission]") {
  Snapshot s =
      Cluster(Queue("a", {"gpu"}, 2,
                    {{"cohortName", "org"}, {"preemption", {{"reclaimWithinCohort", "Any"}}}}),
              {});
  s.cluster_queues["b"] = Queue("b", {"gpu"}, 0, {{"cohortName", "org"}});
  s.local_queues["default/lq"] = LocalQueue("lq", "a");
  s.workloads = {Admitted(Wl("borrower-old", 1, 300), "b", "gpu", 300),
                 Admitted(Wl("borrower-new", 1, 200), "b", "gpu", 100), Wl("owner", 1, 5)};
  Plan p = Schedule(s, kNow);
  REQUIRE(p.evict.size() == 1);
  CHECK(p.evict[0].key == "default/borrower-new");
  CHECK(p.evict[0].reason == "InCohortReclamation");
  CHECK(p.evict[0].message ==
        "Preempted to accommodate a workload (UID: uid-owner, JobUID: ) due to reclamation within "
        "the cohort; preemptor path: /org/a; preemptee path: /org/b");
  // reclaimWithinCohort Never (the default): the owner waits.
  s.cluster_queues["a"]["spec"]["preemption"]["reclaimWithinCohort"] = "Never";
  p = Schedule(s, kNow);
  CHECK(p.evict.empty());
  CHECK(p.admit.empty());
  // LowerPriority: only borrowers of lower priority give way.
  s.cluster_queues["a"]["spec"]["preemption"]["reclaimWithinCohort"] = "LowerPriority";
  CHECK(Schedule(s, kNow).evict.empty());
  s.workloads[2]["spec"]["priority"] = 10;
  CHECK(Schedule(s, kNow).evict.size() == 1);
}

TEST_CASE("cohorts: a queue borrows what the others leave unused, within borrowingLimit",
          "[kueue][admission]") {
  Snapshot s = Cluster(Queue("a", {"gpu"}, 1, {{"cohortName", "org"}}), {});
  s.cluster_queues["b"] = Queue("b", {"gpu"}, 2, {{"cohortName", "org"}});
  s.workloads = {Wl("w1", 1, 30), Wl("w2", 1, 20), Wl("w3", 1, 10), Wl("w4", 1, 5)};
  Plan p = Schedule(s, kNow);
  CHECK(AdmittedKeys(p) ==
        std::vector<std::string>{"default/w1", "default/w2", "default/w3"});  // 1 own + 2 of b's
  s.cluster_queues["a"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["borrowingLimit"] = 1;
  p = Schedule(s, kNow);
  CHECK(AdmittedKeys(p) == std::vector<std::string>{"default/w1", "default/w2"});
}

}  // namespace
}  // namespace pjemu::kueue
