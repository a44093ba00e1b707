// Given condition updates, the status should follow pkg/util/status.go (T49, T50).
#include "emulator/pytorchjob/conditions.h"

#include <catch2/catch.hpp>

namespace pjemu::pytorchjob {
namespace {

using api::HasCondition, api::IsFinished, api::IsSucceeded;
using api::kCreated, api::kFailed, api::kRestarting, api::kRunning, api::kSucceeded,
    api::kSuspended;

const Time kT0 = FakeClock().Now();

TEST_CASE("T49: IsFinished/IsSucceeded/IsFailed/IsRunning/IsSuspended", "[controller]") {
  for (const char* type : {kSucceeded, kFailed, kSuspended, kRunning}) {
    Json s = Json::object();
    UpdateJobConditions(s, type, "True", "r", "m", kT0);
    CHECK(HasCondition(s, type));
    CHECK(IsFinished(s) == (std::string(type) == kSucceeded || std::string(type) == kFailed));
  }
  Json s = Json::object();
  UpdateJobConditions(s, kSucceeded, "False", "r", "m", kT0);
  CHECK_FALSE(IsSucceeded(s));
}

TEST_CASE("T50: Running/Restarting replace each other - Failed flips Running False in place",
          "[controller]") {
  Json s = Json::object();
  UpdateJobConditions(s, kCreated, "True", "PyTorchJobCreated", "c", kT0);
  UpdateJobConditions(s, kRunning, "True", "PyTorchJobRunning", "r", kT0);
  UpdateJobConditions(s, kRestarting, "True", "PyTorchJobRestarting", "x", kT0 + 1s);
  REQUIRE(s["conditions"].size() == 2);
  CHECK(s["conditions"][1]["type"] == kRestarting);
  UpdateJobConditions(s, kRunning, "True", "PyTorchJobRunning", "r", kT0 + 2s);
  REQUIRE(s["conditions"].size() == 2);
  CHECK(s["conditions"][1]["type"] == kRunning);
  UpdateJobConditions(s, kFailed, "True", "PyTorchJobFailed", "f", kT0 + 3s);
  REQUIRE(s["conditions"].size() == 3);
  CHECK(s["conditions"][1]["type"] == kRunning);
  CHECK(s["conditions"][1]["status"] == "False");
  CHECK(s["conditions"][1]["lastTransitionTime"] == "2024-01-01T00:00:02Z");  // kept in place
  CHECK(s["conditions"][2]["type"] == kFailed);
}

TEST_CASE("same status and reason is a no-op - a new reason keeps lastTransitionTime",
          "[controller]") {
  Json s = Json::object();
  UpdateJobConditions(s, kRunning, "True", "A", "m1", kT0);
  UpdateJobConditions(s, kRunning, "True", "A", "m2", kT0 + 5s);
  CHECK(s["conditions"][0]["message"] == "m1");
  UpdateJobConditions(s, kRunning, "True", "B", "m3", kT0 + 6s);
  CHECK(s["conditions"][0]["lastTransitionTime"] == "2024-01-01T00:00:00Z");
  CHECK(s["conditions"][0]["lastUpdateTime"] == "2024-01-01T00:00:06Z");
}

TEST_CASE("quirk: Restarting stays True beside Succeeded (only Running is flipped)",
          "[controller]") {
  Json s = Json::object();
  UpdateJobConditions(s, kRestarting, "True", "PyTorchJobRestarting", "x", kT0);
  UpdateJobConditions(s, kSucceeded, "True", "PyTorchJobSucceeded", "y", kT0);
  CHECK(HasCondition(s, kRestarting));
  CHECK(HasCondition(s, kSucceeded));
}

}  // namespace
}  // namespace pjemu::pytorchjob
