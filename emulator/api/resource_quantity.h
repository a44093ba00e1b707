// Kubernetes resource quantities ("500m", "2Gi", "1e3") as an exact value type, parsed and
// printed as k8s.io/apimachinery/pkg/api/resource does (ParseQuantity, String, Value,
// MilliValue). Used wherever resources.limits/requests are read out of the JSON objects the
// store holds and where a canonical string must round-trip. Thread safety: immutable value.
// Known deviation: Value/MilliValue/NanoValue/Cmp see magnitudes capped at 2^63-1 units in
// every format (Kubernetes caps only BinarySI); String() of a larger decimal value is exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::api {

enum class QuantityFormat { kDecimalExponent, kBinarySI, kDecimalSI };

class Quantity {
 public:
  Quantity() = default;  // zero, DecimalSI

  // ParseQuantity. Errors (kBadRequest) carry Kubernetes' messages verbatim (see below).
  static Result<Quantity> Parse(std::string_view text);
  // Quantity.UnmarshalJSON: a JSON string (trimmed) or number; null is zero; anything else fails.
  static Result<Quantity> FromJson(const Json& value);
  // NewQuantity / NewMilliQuantity.
  static Quantity FromValue(int64_t value, QuantityFormat format);
  static Quantity FromMilli(int64_t milli, QuantityFormat format);

  // Value rounded away from zero to a whole unit (Quantity.Value): "1.5" -> 2, "2Gi" -> 2^31.
  int64_t Value() const;
  // Thousandths rounded away from zero (Quantity.MilliValue): "500m" -> 500, "1" -> 1000.
  int64_t MilliValue() const;
  // The exact internal value: a count of nano units.
  __int128 NanoValue() const { return nanos_; }

  // Quantity.String(): the input text when Kubernetes keeps it (it was already in canonical
  // form, e.g. "100M", "1Gi", "+1"), otherwise CanonicalString(). What the API server returns.
  std::string String() const;
  // The computed canonical form: "1000" -> "1k", "1024Mi" -> "1Gi", "0.5" -> "500m".
  std::string CanonicalString() const;
  Json ToJson() const { return String(); }

  QuantityFormat format() const { return format_; }
  bool IsZero() const { return nanos_ == 0; }
  int Sign() const { return nanos_ < 0 ? -1 : nanos_ > 0 ? 1 : 0; }
  // -1, 0, 1 as Quantity.Cmp.
  int Cmp(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return Cmp(other) == 0; }

 private:
  __int128 nanos_ = 0;
  QuantityFormat format_ = QuantityFormat::kDecimalSI;
  std::string cached_;  // the input text, when Kubernetes would keep it
  std::string big_;     // canonical text of a decimal value above the cap
};

// Kubernetes' error messages (ErrFormatWrong, ErrNumeric, ErrSuffix).
inline constexpr std::string_view kQuantityFormatError =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
inline constexpr std::string_view kQuantityNumericError =
    "unable to parse numeric part of quantity";
inline constexpr std::string_view kQuantitySuffixError = "unable to parse quantity's suffix";

}  // namespace pjemu::api
