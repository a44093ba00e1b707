#include "emulator/api/job_conditions.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/pytorchjob.h"

namespace pjemu::api {
namespace {

const Json& Conditions(const Json& status) { return ArrayOr(Field(status, "conditions")); }

bool IsTrue(const Json& condition) { return Str(condition, "status") == "True"; }

// The first True Succeeded or Failed condition of status, or nullptr.
const Json* Final(const Json& status) {
  for (const Json& c : Conditions(status)) {
    const std::string type = Str(c, "type");
    if ((type == kSucceeded || type == kFailed) && IsTrue(c)) return &c;
  }
  return nullptr;
}

}  // namespace

std::string JobReason(const std::string& suffix) { return std::string(kPyTorchJobKind) + suffix; }

bool HasCondition(const Json& status, const std::string& type) {
  for (const Json& c : Conditions(status)) {
    if (Str(c, "type") == type && IsTrue(c)) return true;
  }
  return false;
}

bool IsFinished(const Json& status) { return Final(status) != nullptr; }

const Json* FinalCondition(const Json& job) { return Final(Field(job, "status")); }

const Json* LastTrueCondition(const Json& job) {
  const Json* last = nullptr;
  for (const Json& c : Conditions(Field(job, "status"))) {
    if (IsTrue(c)) last = &c;
  }
  return last;
}

std::string JobState(const Json& job) {
  const Json& conditions = Conditions(Field(job, "status"));
  return conditions.empty() ? "" : Str(conditions.back(), "type");
}

}  // namespace pjemu::api
