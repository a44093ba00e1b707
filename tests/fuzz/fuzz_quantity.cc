// Fuzz target: resource quantities ("500m", "2Gi", "1e3") as the store, scheduler and kubelet
// read them from resources.limits/requests.
// Invariants: no crash, no UB in the __int128 arithmetic; a parsed quantity prints to text
// that parses to an equal quantity, and the canonical text reaches a fixed point in one more
// round: a BinarySI value that is no whole multiple of 1024 prints as a plain integer, which
// reads back as DecimalSI ("687.5Ki" -> "704000" -> "704k", as kubectl's resource.Quantity).
#include <cstdint>
#include <limits>

#include "emulator/api/resource_quantity.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {

int FuzzQuantity(const std::uint8_t* data, std::size_t size) {
  std::string_view text = AsText(data, size);
  auto q = api::Quantity::Parse(text);
  (void)api::Quantity::FromJson(Json(std::string(text)));
  if (!q.ok()) {
    FUZZ_CHECK(q.status().code() == Code::kBadRequest);
    return 0;
  }
  (void)q->Value();
  (void)q->MilliValue();
  std::string printed = q->String();
  std::string canonical = q->CanonicalString();
  // Above the 2^63-1 cap the text is Kubernetes' own lossy form (a DecimalSI value past "E" drops
  // its suffix: "9223363000630000E" prints "9223363000630", as apimachinery does) and exponents are
  // clamped to +-1000 when parsing (a listed deviation): round trips hold only below the cap.
  constexpr std::int64_t kCap = std::numeric_limits<std::int64_t>::max();
  if (q->Value() >= kCap || q->Value() <= -kCap) {
    (void)api::Quantity::Parse(printed);
    (void)api::Quantity::Parse(canonical);
    return 0;
  }
  auto again = api::Quantity::Parse(printed);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->Cmp(*q) == 0);
  auto canon = api::Quantity::Parse(canonical);
  FUZZ_CHECK(canon.ok());
  FUZZ_CHECK(canon->Cmp(*q) == 0);
  const std::string settled = canon->CanonicalString();
  auto again_settled = api::Quantity::Parse(settled);
  FUZZ_CHECK(again_settled.ok());
  FUZZ_CHECK(again_settled->Cmp(*q) == 0);
  FUZZ_CHECK(again_settled->CanonicalString() == settled);
  if (q->format() != api::QuantityFormat::kBinarySI) FUZZ_CHECK(settled == canonical);
  return 0;
}

}  // namespace pjemu::fuzz
