// Saturating 128-bit helpers behind Quantity (resource_quantity.cc, resource_quantity_format.cc):
// values are counts of nano units, capped at (2^63-1) units. Internal to pjemu_api. Thread safety:
// pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace pjemu::api::quantity_internal {

using U128 = unsigned __int128;

inline constexpr U128 kNanosPerUnit = 1'000'000'000;
inline constexpr U128 kCapNanos = static_cast<U128>(INT64_MAX) * kNanosPerUnit;

// v * 10^exp for exp >= 0, saturating at kCapNanos + 1 (anything above the cap).
U128 MulPow10(U128 v, int exp);

// digits (a decimal digit string) * 10^pow10 * 2^pow2, rounded away from zero to an integer,
// saturating above kCapNanos. Digits beyond the 37 most significant are folded into rounding.
U128 ScaleDigits(const std::string& digits, int pow10, int pow2);

// nanos / divisor rounded away from zero, clamped to int64.
int64_t ScaledDown(__int128 nanos, int64_t divisor);

// Canonical text of (negative ? -1 : 1) * digits * 10^exp10 for values too large for nano
// units: rounded up to 1n, trailing zeros folded into an exponent that is a multiple of 3, then
// the DecimalSI suffix (dropped past "E", as Kubernetes up to 1.3x does: "1000E" -> "1") or
// "e<exp>" for DecimalExponent.
std::string BigDecimalCanonical(bool negative, std::string digits, int exp10, bool decimal_si);

// Decimal text of a 128-bit value.
std::string ToString(__int128 v);

}  // namespace pjemu::api::quantity_internal
