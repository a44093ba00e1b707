// Quantity parsing: a transcription of apimachinery's parseQuantityString / ParseQuantity,
// with inf.Dec replaced by a saturating 128-bit count of nano units.
#include "emulator/api/resource_quantity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "emulator/api/resource_quantity_math.h"

namespace pjemu::api {
namespace {

using quantity_internal::kCapNanos;
using quantity_internal::U128;

struct Scanned {
  bool positive = true;
  std::string_view value, num, denom, suffix;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// parseQuantityString: sign, leading zeros, numerator, '.', denominator, suffix letters, an
// optional sign and exponent digits. Returns false on ErrFormatWrong.
bool Scan(std::string_view str, Scanned* out) {
  size_t pos = 0, end = str.size();
  if (pos < end && (str[0] == '-' || str[0] == '+')) {
    out->positive = str[0] != '-';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos >= end) {
    out->num = out->value = "0";
    return true;
  }
  size_t i = pos;
  while (i < end && IsDigit(str[i])) ++i;
  out->num = str.substr(pos, i - pos);
  if (i >= end) {
    out->value = str;
    return true;
  }
  pos = i;
  if (out->num.empty()) out->num = "0";
  if (str[pos] == '.') {
    ++pos;
    i = pos;
    while (i < end && IsDigit(str[i])) ++i;
    out->denom = str.substr(pos, i - pos);
    if (i >= end) {
      out->value = str;
      return true;
    }
    pos = i;
  }
  out->value = str.substr(0, pos);
  size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  i = pos;
  while (i < end && kSuffixChars.find(str[i]) != std::string_view::npos) ++i;
  if (i >= end) {
    out->suffix = str.substr(suffix_start);
    return true;
  }
  pos = i;
  if (str[pos] == '-' || str[pos] == '+') ++pos;
  while (pos < end && IsDigit(str[pos])) ++pos;
  if (pos < end) return false;
  out->suffix = str.substr(suffix_start);
  return true;
}

struct Suffix {
  int base = 10;
  int exponent = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

// quantitySuffixer.interpret.
std::optional<Suffix> Interpret(std::string_view s) {
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (auto [name, exp] : kDecimal) {
    if (s == name) return Suffix{10, exp, QuantityFormat::kDecimalSI};
  }
  for (auto [name, exp] : kBinary) {
    if (s == name) return Suffix{2, exp, QuantityFormat::kBinarySI};
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view digits = s.substr(1);
    bool negative = digits[0] == '-';
    if (digits[0] == '-' || digits[0] == '+') digits.remove_prefix(1);
    if (digits.empty() || digits.size() > 18) return std::nullopt;
    int64_t v = 0;
    for (char c : digits) {
      if (!IsDigit(c)) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    // Go truncates the exponent to int32; past +-1000 the value is capped or rounds to 1n anyway.
    v = std::clamp<int64_t>(v, 0, 1000);
    return Suffix{10, static_cast<int>(negative ? -v : v), QuantityFormat::kDecimalExponent};
  }
  return std::nullopt;
}

Status FormatError() { return BadRequestError(std::string(kQuantityFormatError)); }

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return FormatError();
  Quantity q;
  if (text == "0") {
    q.cached_ = "0";
    return q;
  }
  Scanned s;
  if (!Scan(text, &s)) return FormatError();
  std::optional<Suffix> suffix = Interpret(s.suffix);
  if (!suffix) return BadRequestError(std::string(kQuantitySuffixError));
  q.format_ = suffix->format;
  int num_len = static_cast<int>(s.num.size()), denom_len = static_cast<int>(s.denom.size());

  // The int64 fast path, which also decides whether Kubernetes keeps the input text.
  int precision = 0, scale = 0;
  int64_t mantissa = 1;
  if (suffix->base == 10) {
    scale = suffix->exponent;
    precision = 18 - (num_len + denom_len);
  } else if (denom_len == 0) {
    mantissa = int64_t{1} << suffix->exponent;
    precision = 15 - num_len - static_cast<int>(static_cast<float>(suffix->exponent) * 3 / 10) - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0 && scale - denom_len >= -9) {
    scale -= denom_len;
    std::string shifted = std::string(s.num) + std::string(s.denom);
    int64_t value = 0;
    for (char c : shifted) value = value * 10 + (c - '0');  // at most 18 digits
    int64_t result = 0;
    if (!__builtin_mul_overflow(value, mantissa, &result)) {
      U128 magnitude = quantity_internal::MulPow10(static_cast<U128>(result), scale + 9);
      if (magnitude > kCapNanos) {
        if (suffix->base == 10) {
          q.big_ = quantity_internal::BigDecimalCanonical(
              !s.positive, std::to_string(result), scale, q.format_ == QuantityFormat::kDecimalSI);
        }
        magnitude = kCapNanos;
      }
      q.nanos_ = s.positive ? static_cast<__int128>(magnitude) : -static_cast<__int128>(magnitude);
      bool canonical = suffix->base == 2
                           ? suffix->exponent % 10 == 0 && (value & 0x07) != 0
                           : scale % 3 == 0 && !shifted.ends_with("000") && shifted[0] != '0';
      if (canonical) q.cached_ = std::string(text);
      return q;
    }
  }

  // The general path (inf.Dec in Kubernetes): exact decimal arithmetic, rounded away from zero
  // to a whole nano unit.
  if (s.value.empty() || s.value == "." || s.value == "+." || s.value == "-.") {
    return BadRequestError(std::string(kQuantityNumericError));
  }
  int pow10 = (suffix->base == 10 ? suffix->exponent : 0) - denom_len + 9;
  int pow2 = suffix->base == 2 ? suffix->exponent : 0;
  U128 magnitude =
      quantity_internal::ScaleDigits(std::string(s.num) + std::string(s.denom), pow10, pow2);
  if (magnitude > kCapNanos) {
    if (suffix->base == 10) {
      q.big_ = quantity_internal::BigDecimalCanonical(
          !s.positive, std::string(s.num) + std::string(s.denom), suffix->exponent - denom_len,
          q.format_ == QuantityFormat::kDecimalSI);
    }
    magnitude = kCapNanos;
  }
  if (q.format_ == QuantityFormat::kBinarySI && magnitude > 0 &&
      magnitude < quantity_internal::kNanosPerUnit) {
    q.format_ = QuantityFormat::kDecimalSI;
  }
  q.nanos_ = s.positive ? static_cast<__int128>(magnitude) : -static_cast<__int128>(magnitude);
  return q;
}

Result<Quantity> Quantity::FromJson(const Json& value) {
  if (value.is_null()) return Quantity();
  if (value.is_number()) return Parse(value.dump());
  if (!value.is_string()) return FormatError();
  std::string_view s = value.get_ref<const std::string&>();
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return FormatError();
  s = s.substr(first, s.find_last_not_of(kSpace) - first + 1);
  return Parse(s);
}

Quantity Quantity::FromValue(int64_t value, QuantityFormat format) {
  Quantity q;
  q.nanos_ = static_cast<__int128>(value) * 1'000'000'000;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromMilli(int64_t milli, QuantityFormat format) {
  Quantity q;
  q.nanos_ = static_cast<__int128>(milli) * 1'000'000;
  q.format_ = format;
  return q;
}

int64_t Quantity::Value() const { return quantity_internal::ScaledDown(nanos_, 1'000'000'000); }

int64_t Quantity::MilliValue() const { return quantity_internal::ScaledDown(nanos_, 1'000'000); }

int Quantity::Cmp(const Quantity& other) const {
  return nanos_ < other.nanos_ ? -1 : nanos_ > other.nanos_ ? 1 : 0;
}

std::string Quantity::String() const { return cached_.empty() ? CanonicalString() : cached_; }

}  // namespace pjemu::api
