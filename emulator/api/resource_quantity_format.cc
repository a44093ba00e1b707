// Quantity's canonical form (CanonicalizeBytes in apimachinery) and the 128-bit arithmetic
// behind it.
#include <algorithm>
#include <string>

#include "emulator/api/resource_quantity.h"
#include "emulator/api/resource_quantity_math.h"

namespace pjemu::api {
namespace quantity_internal {

U128 MulPow10(U128 v, int exp) {
  for (int i = 0; i < exp && v != 0; ++i) {
    if (v > kCapNanos / 10) return kCapNanos + 1;
    v *= 10;
  }
  return v;
}

U128 ScaleDigits(const std::string& all_digits, int pow10, int pow2) {
  std::string digits =
      all_digits.substr(std::min(all_digits.find_first_not_of('0'), all_digits.size()));
  bool sticky = false;  // a non-zero part was dropped: round away from zero
  constexpr size_t kMaxDigits = 37;
  if (digits.size() > kMaxDigits && pow10 < 0) {
    size_t drop = std::min<size_t>(digits.size() - kMaxDigits, static_cast<size_t>(-pow10));
    sticky = digits.find_first_not_of('0', digits.size() - drop) != std::string::npos;
    digits.resize(digits.size() - drop);
    pow10 += static_cast<int>(drop);
  }
  if (digits.size() > kMaxDigits) return kCapNanos + 1;
  U128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  for (int i = 0; i < pow2 && v != 0; ++i) {
    if (v >> 126) return kCapNanos + 1;
    v <<= 1;
  }
  if (pow10 >= 0) {
    v = MulPow10(v, pow10);
  } else {
    for (int i = 0; i < -pow10 && v != 0; ++i) {
      sticky = sticky || v % 10 != 0;
      v /= 10;
    }
  }
  if (sticky) ++v;
  return v;
}

int64_t ScaledDown(__int128 nanos, int64_t divisor) {
  __int128 q = nanos / divisor;
  if (nanos % divisor != 0) q += nanos > 0 ? 1 : -1;
  return static_cast<int64_t>(std::clamp<__int128>(q, INT64_MIN, INT64_MAX));
}

std::string BigDecimalCanonical(bool negative, std::string digits, int exp10, bool decimal_si) {
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (exp10 < -9) {
    size_t drop = std::min(digits.size(), static_cast<size_t>(-9 - exp10));
    bool sticky = digits.find_first_not_of('0', digits.size() - drop) != std::string::npos;
    digits.resize(digits.size() - drop);
    exp10 = -9;
    if (sticky) {  // round away from zero: add one to the decimal string
      size_t i = digits.size();
      while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
      if (i == 0) {
        digits.insert(digits.begin(), '1');
      } else {
        ++digits[i - 1];
      }
    }
  }
  if (digits.empty()) return "0";
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++exp10;
  }
  switch (exp10 % 3) {
    case 1:
    case -2:
      digits += "0";
      exp10 -= 1;
      break;
    case 2:
    case -1:
      digits += "00";
      exp10 -= 2;
      break;
  }
  std::string suffix;
  if (decimal_si) {
    static constexpr std::pair<int, const char*> kSuffixes[] = {{-9, "n"}, {-6, "u"}, {-3, "m"},
                                                                {3, "k"},  {6, "M"},  {9, "G"},
                                                                {12, "T"}, {15, "P"}, {18, "E"}};
    for (auto [exp, name] : kSuffixes) {
      if (exp == exp10) suffix = name;
    }
  } else if (exp10 != 0) {
    suffix = "e" + std::to_string(exp10);
  }
  return (negative ? "-" : "") + digits + suffix;
}

std::string ToString(__int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  U128 u = negative ? static_cast<U128>(-v) : static_cast<U128>(v);
  std::string out;
  while (u != 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace quantity_internal

namespace {

using quantity_internal::kNanosPerUnit;

std::string DecimalSuffix(int exponent, QuantityFormat format) {
  if (format == QuantityFormat::kDecimalSI) {
    static constexpr std::pair<int, const char*> kSuffixes[] = {
        {-9, "n"}, {-6, "u"}, {-3, "m"}, {0, ""},   {3, "k"},
        {6, "M"},  {9, "G"},  {12, "T"}, {15, "P"}, {18, "E"}};
    for (auto [exp, name] : kSuffixes) {
      if (exp == exponent) return name;
    }
  }
  return exponent == 0 ? "" : "e" + std::to_string(exponent);
}

}  // namespace

std::string Quantity::CanonicalString() const {
  if (!big_.empty()) return big_;
  if (nanos_ == 0) return "0";
  QuantityFormat format = format_;
  if (format == QuantityFormat::kBinarySI) {
    __int128 limit = static_cast<__int128>(1024) * kNanosPerUnit;
    if ((nanos_ > -limit && nanos_ < limit) || nanos_ % kNanosPerUnit != 0) {
      format = QuantityFormat::kDecimalSI;  // small or fractional: shown in decimal
    }
  }
  if (format == QuantityFormat::kBinarySI) {
    __int128 units = nanos_ / kNanosPerUnit;
    int exponent = 0;
    while (exponent < 6 && units % 1024 == 0) {
      units /= 1024;
      ++exponent;
    }
    static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    return quantity_internal::ToString(units) + kBinary[exponent];
  }
  __int128 mantissa = nanos_;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  switch (exponent % 3) {
    case 1:
    case -2:
      mantissa *= 10;
      exponent -= 1;
      break;
    case 2:
    case -1:
      mantissa *= 100;
      exponent -= 2;
      break;
  }
  return quantity_internal::ToString(mantissa) + DecimalSuffix(exponent, format);
}

}  // namespace pjemu::api
