#include "emulator/api/int_or_string.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace pjemu::api {
namespace {

const char* JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "number";
  }
}

// Go's strconv.Atoi on a percentage's digits, with its error text.
Result<int64_t> Atoi(std::string_view s) {
  auto fail = [&](const char* why) {
    return BadRequestError(
        fmt::format("strconv.Atoi: parsing {}: {}", Json(std::string(s)).dump(), why));
  };
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return fail("invalid syntax");
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return fail("invalid syntax");
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10)
      return fail("value out of range");
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

}  // namespace

IntOrString IntOrString::FromInt(int32_t v) {
  IntOrString r;
  r.int_ = v;
  return r;
}

IntOrString IntOrString::FromString(std::string s) {
  IntOrString r;
  r.type_ = Type::kString;
  r.str_ = std::move(s);
  return r;
}

Result<IntOrString> IntOrString::FromJson(const Json& value) {
  if (value.is_string()) return FromString(value.get<std::string>());
  if (value.is_null()) return IntOrString();
  auto fail = [](const std::string& what) {
    return BadRequestError(
        fmt::format("json: cannot unmarshal {} into Go value of type int32", what));
  };
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) return fail("number " + value.dump());
    return FromInt(static_cast<int32_t>(v));
  }
  if (value.is_number_unsigned()) return fail("number " + value.dump());
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (std::nearbyint(d) == d && d >= INT32_MIN && d <= INT32_MAX) {
      return FromInt(static_cast<int32_t>(d));  // 8080.0 decodes into an int32 in Go too
    }
    return fail("number " + value.dump());
  }
  return fail(JsonTypeName(value));
}

std::string IntOrString::String() const {
  return type_ == Type::kString ? str_ : std::to_string(int_);
}

Json IntOrString::ToJson() const { return type_ == Type::kString ? Json(str_) : Json(int_); }

Result<int> ScaledValueFromIntOrPercent(const IntOrString& value, int total, bool round_up) {
  if (value.type() == IntOrString::Type::kInt) return value.int_value();
  const std::string& s = value.str_value();
  if (s.empty() || s.back() != '%') {
    return BadRequestError("invalid type: string is not a percentage");
  }
  Result<int64_t> percent = Atoi(std::string_view(s).substr(0, s.size() - 1));
  if (!percent.ok()) {
    return BadRequestError(fmt::format("invalid value for IntOrString: invalid value {}: {}",
                                       Json(s).dump(), percent.status().message()));
  }
  double scaled = static_cast<double>(*percent) * total / 100.0;
  return static_cast<int>(round_up ? std::ceil(scaled) : std::floor(scaled));
}

}  // namespace pjemu::api
