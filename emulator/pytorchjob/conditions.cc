#include "emulator/pytorchjob/conditions.h"

#include "emulator/api/json_fields.h"

namespace pjemu::pytorchjob {

using api::Field, api::IsFailed, api::Str;
using api::kFailed, api::kRestarting, api::kRunning, api::kSucceeded;

void UpdateJobConditions(Json& status, const std::string& type, const std::string& cond_status,
                         const std::string& reason, const std::string& message, Time now) {
  if (IsFailed(status)) return;
  Json conds = Field(status, "conditions").is_array() ? status["conditions"] : Json::array();
  const Json* current = nullptr;
  for (const Json& c : conds) {
    if (Str(c, "type") == type) current = &c;
  }
  if (current && Str(*current, "status") == cond_status && Str(*current, "reason") == reason) {
    return;
  }
  const std::string ts = FormatTime(now);
  Json cond = {{"type", type},       {"status", cond_status}, {"reason", reason},
               {"message", message}, {"lastUpdateTime", ts},  {"lastTransitionTime", ts}};
  if (current && Str(*current, "status") == cond_status) {
    cond["lastTransitionTime"] = Field(*current, "lastTransitionTime");
  }
  Json kept = Json::array();
  for (Json c : conds) {
    const std::string t = Str(c, "type");
    if (t == type) continue;
    if (type == kRestarting && t == kRunning) continue;
    if (type == kRunning && t == kRestarting) continue;
    if ((type == kFailed || type == kSucceeded) && t == kRunning) c["status"] = "False";
    kept.push_back(std::move(c));
  }
  kept.push_back(std::move(cond));
  status["conditions"] = std::move(kept);
}

}  // namespace pjemu::pytorchjob
