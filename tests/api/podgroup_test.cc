// Given a PodGroup and its pods, the vocabulary should find a pod's group, refuse bad specs by
// field, and write each kind's status as its controller does.
#include "emulator/api/podgroup.h"

#include <catch2/catch.hpp>

namespace pjemu::api {
namespace {

Json PodIn(const std::string& phase, const std::string& node) {
  return {{"metadata", {{"labels", {{kPodGroupLabel, "g"}}}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", phase}}}};
}

TEST_CASE("a pod names its group by label or Volcano's annotation", "[api][gang]") {
  auto sp = PodGroupOf(PodIn("Pending", ""));
  REQUIRE(sp);
  CHECK(*sp->type == SchedulerPluginsPodGroups());
  CHECK(sp->name == "g");
  auto vc = PodGroupOf({{"metadata", {{"annotations", {{kVolcanoGroupAnnotation, "v"}}}}}});
  REQUIRE(vc);
  CHECK(*vc->type == VolcanoPodGroups());
  CHECK_FALSE(PodGroupOf({{"metadata", Json::object()}}));
}

TEST_CASE("PodGroup admission names the field", "[api][gang]") {
  Status s = ValidatePodGroup({{"spec", {{"minMember", -1}}}}, nullptr, nullptr);
  CHECK(s.message() == "spec.minMember: Invalid value: must be an integer >= 0");
  CHECK(ValidatePodGroup({{"spec", {{"minMember", 2}}}}, nullptr, nullptr).ok());
}

TEST_CASE("scheduler-plugins phases follow its controller", "[api][gang]") {
  Json pg = {{"metadata", {{"name", "g"}, {"namespace", "d"}}}, {"spec", {{"minMember", 2}}}};
  Json p1 = PodIn("Pending", ""), p2 = PodIn("Running", "n1");
  Json s = PodGroupStatus(SchedulerPluginsPodGroups(), pg, CountGang({&p1}), "", Time{});
  CHECK(s["phase"] == "Pending");
  pg["status"] = s;
  s = PodGroupStatus(SchedulerPluginsPodGroups(), pg, CountGang({&p1, &p2}), "", Time{});
  CHECK(s["phase"] == "Scheduling");
  CHECK(s["occupiedBy"] == "d/g");
  Json r1 = PodIn("Running", "n1"), r2 = PodIn("Running", "n2");
  pg["status"] = s;
  s = PodGroupStatus(SchedulerPluginsPodGroups(), pg, CountGang({&r1, &r2}), "", Time{});
  CHECK(s["phase"] == "Running");
  CHECK(s["running"] == 2);
}

TEST_CASE("Volcano: Inqueue with NotEnoughResources, then Running", "[api][gang]") {
  Json pg = {{"metadata", {{"name", "g"}}}, {"spec", {{"minMember", 2}}}};
  Json p1 = PodIn("Pending", "");
  Json s = PodGroupStatus(VolcanoPodGroups(), pg, CountGang({&p1}), "why", Time{});
  CHECK(s["phase"] == "Inqueue");
  CHECK(s["conditions"][0]["reason"] == "NotEnoughResources");
  CHECK(s["conditions"][0]["message"] == "why");
  Json r1 = PodIn("Running", "n1"), r2 = PodIn("Running", "n2");
  s = PodGroupStatus(VolcanoPodGroups(), pg, CountGang({&r1, &r2}), "", Time{});
  CHECK(s["phase"] == "Running");
}

}  // namespace
}  // namespace pjemu::api
