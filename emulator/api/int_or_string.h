// IntOrString (k8s.io/apimachinery/pkg/util/intstr): fields such as a container port name or
// a rolling-update percentage that hold either an int32 or a string. Decoded from the JSON
// objects the store holds by whoever reads such a field (controller, kubelet).
// Thread safety: immutable value.
#pragma once

#include <cstdint>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

class IntOrString {
 public:
  enum class Type { kInt, kString };

  IntOrString() = default;  // int 0
  static IntOrString FromInt(int32_t v);
  static IntOrString FromString(std::string s);
  // UnmarshalJSON: a JSON string, or a number that fits an int32. Errors (kBadRequest) use Go's
  // wording: "json: cannot unmarshal number 1.5 into Go value of type int32",
  // "json: cannot unmarshal bool into Go value of type int32". null is int 0, as in Go.
  static Result<IntOrString> FromJson(const Json& value);

  Type type() const { return type_; }
  int32_t int_value() const { return int_; }
  const std::string& str_value() const { return str_; }
  // "8080" or "http".
  std::string String() const;
  Json ToJson() const;
  bool operator==(const IntOrString&) const = default;

 private:
  Type type_ = Type::kInt;
  int32_t int_ = 0;
  std::string str_;
};

// intstr.GetScaledValueFromIntOrPercent: an int is returned as is; "50%" of `total` is rounded
// up or down. Errors: "invalid type: string is not a percentage" (no '%'), and
// "invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid
// syntax".
Result<int> ScaledValueFromIntOrPercent(const IntOrString& value, int total, bool round_up);

}  // namespace pjemu::api
