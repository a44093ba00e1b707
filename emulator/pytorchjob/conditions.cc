#include "emulator/pytorchjob/conditions.h"

#include "emulator/api/json_fields.h"

namespace pjemu::pytorchjob {

using api::Field, api::IsFailed, api::Str;
using api::kFailed, api::kRestarting, api::kRunning, api::kSucceeded;

void UpdateJobConditions(Json& status, const std::string& type, const std::string& cond_status,
                         const std::string& reason, const std::string& message, Time now) {
  if (IsFailed(status)) return;
  const Json* current = nullptr;  // read in place: most passes change nothing
  for (const Json& c : api::ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") == type) current = &c;
  }
  if (current && Str(*current, "status") == cond_status && Str(*current, "reason") == reason) {
    return;
  }
  const std::string ts = FormatTime(now);
  Json cond = Json::object();  // in key order (api::AppendMember)
  api::AppendMember(cond, "lastTransitionTime",
                    current && Str(*current, "status") == cond_status
                        ? Field(*current, "lastTransitionTime")
                        : Json(ts));
  api::AppendMember(cond, "lastUpdateTime", ts);
  api::AppendMember(cond, "message", message);
  api::AppendMember(cond, "reason", reason);
  api::AppendMember(cond, "status", cond_status);
  api::AppendMember(cond, "type", type);
  // The others are moved, not copied, into the new list (`current` is not read after this).
  Json conds =
      Field(status, "conditions").is_array() ? std::move(status["conditions"]) : Json::array();
  Json kept = Json::array();
  for (Json& c : conds) {
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
