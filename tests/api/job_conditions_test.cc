// Given a job's conditions, the predicates should say whether it has finished and which
// condition says so, the one answer the controller, the CLI and the scenario runner share.
#include "emulator/api/job_conditions.h"

#include <catch2/catch.hpp>

#include "emulator/api/json_fields.h"

namespace pjemu::api {
namespace {

Json Cond(const std::string& type, const std::string& status) {
  return {{"type", type}, {"status", status}, {"reason", "PyTorchJob" + type}};
}

Json JobWith(Json conditions) { return {{"status", {{"conditions", std::move(conditions)}}}}; }

TEST_CASE("a running job has not finished", "[api]") {
  Json job = JobWith({Cond(kCreated, "True"), Cond(kRunning, "True")});
  CHECK_FALSE(IsFinished(job["status"]));
  CHECK(IsRunning(job["status"]));
  CHECK(FinalCondition(job) == nullptr);
  REQUIRE(LastTrueCondition(job) != nullptr);
  CHECK((*LastTrueCondition(job))["type"] == kRunning);
  CHECK(JobState(job) == kRunning);
}

TEST_CASE("Succeeded or Failed True finishes a job and FinalCondition names it", "[api]") {
  for (const char* type : {kSucceeded, kFailed}) {
    CAPTURE(type);
    Json job = JobWith({Cond(kCreated, "True"), Cond(kRunning, "False"), Cond(type, "True")});
    CHECK(IsFinished(job["status"]));
    CHECK(IsSucceeded(job["status"]) == (std::string(type) == kSucceeded));
    CHECK(IsFailed(job["status"]) == (std::string(type) == kFailed));
    REQUIRE(FinalCondition(job) != nullptr);
    CHECK((*FinalCondition(job))["type"] == type);
    CHECK((*FinalCondition(job))["reason"] == JobReason(type));
    CHECK((*LastTrueCondition(job))["type"] == type);
    CHECK(JobState(job) == type);
  }
}

TEST_CASE("a False Succeeded or Failed condition does not finish a job", "[api]") {
  Json job = JobWith({Cond(kSucceeded, "False"), Cond(kFailed, "Unknown")});
  CHECK_FALSE(IsFinished(job["status"]));
  CHECK(FinalCondition(job) == nullptr);
  CHECK(LastTrueCondition(job) == nullptr);
  CHECK(JobState(job) == kFailed);  // the State column shows the last type, whatever its status
}

TEST_CASE("FinalCondition is the first finishing condition, LastTrueCondition the last True one",
          "[api]") {
  Json job = JobWith({Cond(kSucceeded, "True"), Cond(kSuspended, "True")});
  CHECK((*FinalCondition(job))["type"] == kSucceeded);
  CHECK((*LastTrueCondition(job))["type"] == kSuspended);
}

TEST_CASE("jobs without usable conditions read as not finished, state empty", "[api]") {
  for (const Json& job : {Json::object(), Json{{"status", nullptr}},
                          Json{{"status", {{"conditions", "x"}}}}, JobWith(Json::array())}) {
    CAPTURE(job);
    CHECK_FALSE(IsFinished(Field(job, "status")));
    CHECK(FinalCondition(job) == nullptr);
    CHECK(LastTrueCondition(job) == nullptr);
    CHECK(JobState(job).empty());
  }
}

}  // namespace
}  // namespace pjemu::api
