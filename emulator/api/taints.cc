#include "emulator/api/taints.h"

#include <algorithm>

#include "emulator/api/json_fields.h"

namespace pjemu::api {

bool Toleration::Tolerates(const Taint& taint) const {
  if (!effect.empty() && effect != taint.effect) return false;
  if (key.empty()) return op == "Exists";
  if (key != taint.key) return false;
  if (op == "Exists") return true;
  return value == taint.value;  // "" or Equal
}

std::vector<Taint> TaintsOf(const Json& node) {
  std::vector<Taint> out;
  for (const Json& t : ArrayOr(FieldAt(node, {"spec", "taints"}))) {
    if (!t.is_object()) continue;
    out.push_back({Str(t, "key"), Str(t, "value"), Str(t, "effect")});
  }
  return out;
}

std::vector<Toleration> TolerationsOf(const Json& pod) {
  std::vector<Toleration> out;
  for (const Json& t : ArrayOr(FieldAt(pod, {"spec", "tolerations"}))) {
    if (!t.is_object()) continue;
    Toleration tol{Str(t, "key"), Str(t, "operator"), Str(t, "value"), Str(t, "effect"), {}};
    if (const Json& s = Field(t, "tolerationSeconds"); s.is_number_integer()) {
      tol.seconds = s.get<std::int64_t>();
    }
    out.push_back(std::move(tol));
  }
  return out;
}

Json TaintToJson(const Taint& taint) {
  Json t = {{"key", taint.key}, {"effect", taint.effect}};
  if (!taint.value.empty()) t["value"] = taint.value;
  return t;
}

namespace {

bool Tolerated(const Taint& taint, const std::vector<Toleration>& tolerations) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return t.Tolerates(taint); });
}

}  // namespace

std::optional<Taint> FirstUntolerated(const std::vector<Taint>& taints,
                                      const std::vector<Toleration>& tolerations,
                                      const std::vector<std::string>& effects) {
  for (const Taint& taint : taints) {
    if (std::find(effects.begin(), effects.end(), taint.effect) == effects.end()) continue;
    if (!Tolerated(taint, tolerations)) return taint;
  }
  return std::nullopt;
}

int UntoleratedPreferNoSchedule(const std::vector<Taint>& taints,
                                const std::vector<Toleration>& tolerations) {
  int n = 0;
  for (const Taint& taint : taints) {
    if (taint.effect == kPreferNoSchedule && !Tolerated(taint, tolerations)) ++n;
  }
  return n;
}

std::optional<std::int64_t> NoExecuteEvictionDelay(const std::vector<Taint>& taints,
                                                   const std::vector<Toleration>& tolerations) {
  std::optional<std::int64_t> delay;
  for (const Taint& taint : taints) {
    if (taint.effect != kNoExecute) continue;
    bool matched = false;
    for (const Toleration& t : tolerations) {
      if (!t.Tolerates(taint)) continue;
      matched = true;
      if (t.seconds) {
        std::int64_t s = std::max<std::int64_t>(*t.seconds, 0);
        delay = delay ? std::min(*delay, s) : s;
      }
    }
    if (!matched) return 0;  // untolerated: at once
  }
  return delay;
}

Status ValidateTaints(const Json& taints, const std::string& field) {
  if (taints.is_null()) return Status::Ok();
  if (!taints.is_array()) return Status(Code::kInvalid, field + ": expected a list");
  for (std::size_t i = 0; i < taints.size(); ++i) {
    const Json& t = taints[i];
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!t.is_object()) return Status(Code::kInvalid, at + ": expected an object");
    if (Str(t, "key").empty()) return Status(Code::kInvalid, at + ".key: Required value");
    const std::string effect = Str(t, "effect");
    if (effect != kNoSchedule && effect != kPreferNoSchedule && effect != kNoExecute) {
      return Status(Code::kInvalid, at + ".effect: Unsupported value: \"" + effect +
                          "\": supported values: \"NoSchedule\", \"PreferNoSchedule\", "
                          "\"NoExecute\"");
    }
  }
  return Status::Ok();
}

}  // namespace pjemu::api
