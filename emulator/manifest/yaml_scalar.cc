#include "emulator/manifest/yaml_scalar.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>

namespace pjemu::manifest {
namespace {

constexpr std::string_view kTrue[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                      "True", "TRUE", "on",  "On",  "ON"};
constexpr std::string_view kFalse[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                       "False", "FALSE", "off", "Off", "OFF"};
constexpr std::string_view kNull[] = {"~", "null", "Null", "NULL"};
constexpr std::string_view kNonFinite[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",  ".INF",
                                           "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};

template <typename Table>
bool In(const Table& table, std::string_view s) {
  for (std::string_view t : table) {
    if (t == s) return true;
  }
  return false;
}

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Go's strconv.ParseUint(s, base, 64) on an unsigned digit string (no sign, no prefix).
std::optional<uint64_t> ParseDigits(std::string_view s, int base) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d = DigitValue(c);
    if (d >= base) return std::nullopt;
    if (v > (std::numeric_limits<uint64_t>::max() - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

struct GoInt {
  bool negative = false;
  bool plus = false;
  uint64_t magnitude = 0;
};

// Go's strconv.ParseInt/ParseUint with base 0: optional sign, then 0x/0o/0b prefix, a leading 0
// for octal, or decimal.
std::optional<GoInt> ParseGoInt(std::string_view s) {
  GoInt r;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    r.negative = s[0] == '-';
    r.plus = s[0] == '+';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X') {
      base = 16, s.remove_prefix(2);
    } else if (p == 'o' || p == 'O') {
      base = 8, s.remove_prefix(2);
    } else if (p == 'b' || p == 'B') {
      base = 2, s.remove_prefix(2);
    } else {
      base = 8, s.remove_prefix(1);
    }
  }
  auto v = ParseDigits(s, base);
  if (!v) return std::nullopt;
  r.magnitude = *v;
  return r;
}

// go-yaml v2's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

Json FloatToJson(double f) {
  // json.Marshal writes integral float64 values without a fraction; keep them integers.
  if (std::nearbyint(f) == f && std::fabs(f) < 9.2e18) return Json(static_cast<int64_t>(f));
  return Json(f);
}

Json IntToJson(const GoInt& v) {
  if (!v.negative) {
    if (v.magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Json(static_cast<int64_t>(v.magnitude));
    }
    // kubectl decodes integers above int64 into float64 before sending them on.
    return Json(static_cast<double>(v.magnitude));
  }
  return Json(static_cast<int64_t>(0 - v.magnitude));
}

// ParseInt takes a sign and int64 range; ParseUint takes the rest of uint64 but no sign.
bool FitsGoInt(const GoInt& v) {
  constexpr uint64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
  if (v.negative) return v.magnitude <= kMaxInt64 + 1;
  return !v.plus || v.magnitude <= kMaxInt64;
}

}  // namespace

Result<Json> ResolvePlainScalar(std::string_view text) {
  if (In(kNull, text) || text.empty()) return Json(nullptr);
  if (In(kTrue, text)) return Json(true);
  if (In(kFalse, text)) return Json(false);
  if (In(kNonFinite, text)) {
    return BadRequestError(fmt::format("unsupported value {}: JSON has no infinity or NaN", text));
  }
  char c = text[0];
  if (c == '.') {
    // go-yaml v2 hands ".5" straight to strconv.ParseFloat.
    if (IsYamlStyleFloat(text)) return FloatToJson(std::strtod(std::string(text).c_str(), nullptr));
    return Json(std::string(text));
  }
  if (!((c >= '0' && c <= '9') || c == '+' || c == '-')) return Json(std::string(text));

  std::string plain;
  for (char ch : text) {
    if (ch != '_') plain.push_back(ch);
  }
  if (auto v = ParseGoInt(plain); v && FitsGoInt(*v)) {
    return IntToJson(*v);
  }
  if (IsYamlStyleFloat(plain)) {
    errno = 0;
    double f = std::strtod(plain.c_str(), nullptr);
    if (errno != ERANGE) return FloatToJson(f);
  }
  // go-yaml v2 checks "0b"/"-0b" again after the float attempt; ParseGoInt covered them.
  return Json(std::string(text));
}

Result<std::string> ResolvePlainKey(std::string_view text) {
  ASSIGN_OR_RETURN(Json v, ResolvePlainScalar(text));
  switch (v.type()) {
    case Json::value_t::string:
      return v.get<std::string>();
    case Json::value_t::boolean:
      return std::string(v.get<bool>() ? "true" : "false");
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return v.dump();
    case Json::value_t::number_float:
      // sigs.k8s.io/yaml formats float keys with strconv.FormatFloat(f, 'g', -1, 32).
      return fmt::format("{}", static_cast<float>(v.get<double>()));
    default:
      return BadRequestError(fmt::format("unsupported map key {}", text.empty() ? "null" : text));
  }
}

}  // namespace pjemu::manifest
