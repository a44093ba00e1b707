// Fuzz target: request-body decoding (DecodeBody: nlohmann parsing with duplicate-key and
// unknown-field detection under fieldValidation). The first byte picks the kind and the mode.
// Invariants: no crash or escaping exception; a decoded body is an object that serializes and
// parses back to itself; a refused body is 400 (415 for a protobuf body of a kind without a
// decoder); Strict never accepts what Warn reports a problem in; UnknownFields of
// what Ignore kept is empty; a decoded body packs (common/packed_json.h) and unpacks to the
// same tree, with the same number types, as nlohmann's own MessagePack reader gives.
#include "emulator/api/resources.h"
#include "emulator/apiserver/field_validation.h"
#include "emulator/apiserver/protobuf_body.h"
#include "emulator/common/packed_json.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {
namespace {

// Whether `a` and `b` have the same shape and every value the same JSON type (unsigned, signed
// and float told apart).
bool SameTypes(const Json& a, const Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(), jt = b.begin(); it != a.end(); ++it, ++jt) {
      if (it.key() != jt.key() || !SameTypes(*it, *jt)) return false;
    }
  } else if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!SameTypes(a[i], b[i])) return false;
    }
  }
  return true;
}

}  // namespace

int FuzzJsonCodec(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& types = api::AllResources();
  const api::ResourceType& type = types[data[0] % types.size()];
  std::string body(AsText(data + 1, size - 1));

  std::vector<std::string> warnings;
  auto warn = apiserver::DecodeBody(type, body, apiserver::FieldValidation::kWarn, &warnings);
  auto strict = apiserver::DecodeBody(type, body, apiserver::FieldValidation::kStrict, nullptr);
  auto ignore = apiserver::DecodeBody(type, body, apiserver::FieldValidation::kIgnore, nullptr);
  FUZZ_CHECK(warn.ok() == ignore.ok());
  if (!warn.ok()) {
    FUZZ_CHECK(!strict.ok());
    // A protobuf body (kubectl 1.33's creates) of a kind without a decoder is 415, else 400.
    FUZZ_CHECK(warn.status().code() == Code::kBadRequest ||
               (apiserver::IsProtobufBody(body) &&
                warn.status().code() == Code::kUnsupportedMediaType));
    return 0;
  }
  FUZZ_CHECK(strict.ok() == warnings.empty());
  FUZZ_CHECK(warn->is_object());
  FUZZ_CHECK(*warn == *ignore);
  FUZZ_CHECK(apiserver::UnknownFields(type, *ignore).empty());
  std::string packed = PackJson(*warn);
  if (!packed.empty()) {
    Json unpacked = UnpackJson(packed, "a fuzzed body");
    FUZZ_CHECK(unpacked == *warn);
    FUZZ_CHECK(unpacked.dump() == Json::from_msgpack(Json::to_msgpack(*warn)).dump());
    FUZZ_CHECK(SameTypes(unpacked, Json::from_msgpack(Json::to_msgpack(*warn))));
  }
  std::string dumped = warn->dump(-1, ' ', false, Json::error_handler_t::replace);
  Json again = Json::parse(dumped, nullptr, false);
  FUZZ_CHECK(!again.is_discarded());
  // Invalid UTF-8 in strings is replaced on output, so only valid text must round-trip.
  if (dumped == warn->dump(-1, ' ', false, Json::error_handler_t::ignore)) {
    FUZZ_CHECK(again == *warn);
  }
  return 0;
}

}  // namespace pjemu::fuzz
