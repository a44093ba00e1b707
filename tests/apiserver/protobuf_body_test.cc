// Given a body in Kubernetes' protobuf envelope (what kubectl 1.33 sends for `create configmap`
// and `create secret`), the server should see the same JSON object a JSON client would send.
#include "emulator/apiserver/protobuf_body.h"

#include <catch2/catch.hpp>

#include "emulator/apiserver/field_validation.h"

namespace pjemu::apiserver {
namespace {

std::string Varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Field(int number, const std::string& bytes) {
  return Varint((number << 3) | 2) + Varint(bytes.size()) + bytes;
}
std::string Entry(int number, const std::string& k, const std::string& v) {
  return Field(number, Field(1, k) + Field(2, v));
}
std::string Envelope(const std::string& api_version, const std::string& kind,
                     const std::string& raw) {
  return std::string("k8s\0", 4) + Field(1, Field(1, api_version) + Field(2, kind)) +
         Field(2, raw) + Field(3, "") + Field(4, "");
}

TEST_CASE("a protobuf Secret decodes to the JSON wire form", "[apiserver]") {
  std::string meta = Field(1, "tok") + Field(3, "default") + Entry(11, "app", "x");
  std::string secret = Field(1, meta) + Entry(2, "token", "abc") + Field(3, "Opaque") +
                       Varint((5 << 3) | 0) + Varint(1);
  std::string body = Envelope("v1", "Secret", secret);
  REQUIRE(IsProtobufBody(body));
  Result<Json> j = ProtobufBodyToJson(api::Secrets(), body);
  REQUIRE(j.ok());
  CHECK(*j ==
        Json({{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", "tok"}, {"namespace", "default"}, {"labels", {{"app", "x"}}}}},
              {"data", {{"token", "YWJj"}}},
              {"type", "Opaque"},
              {"immutable", true}}));
}

TEST_CASE("a protobuf ConfigMap goes through DecodeBody like JSON", "[apiserver]") {
  std::string cm = Field(1, Field(1, "train")) + Entry(2, "train.py", "print(1)\n");
  Result<Json> j = DecodeBody(api::ConfigMaps(), Envelope("v1", "ConfigMap", cm),
                              FieldValidation::kStrict, nullptr);
  REQUIRE(j.ok());
  CHECK((*j)["data"]["train.py"] == "print(1)\n");
  CHECK((*j)["metadata"]["name"] == "train");
}

TEST_CASE("protobuf bodies of other kinds or broken ones are refused", "[apiserver]") {
  CHECK(ProtobufBodyToJson(api::Pods(), Envelope("v1", "Pod", "")).status().code() ==
        Code::kUnsupportedMediaType);
  std::string broken = std::string("k8s\0", 4) + Field(2,
                                                       "\x0a\x05"
                                                       "ab");
  CHECK(ProtobufBodyToJson(api::ConfigMaps(), broken).status().code() == Code::kBadRequest);
  CHECK_FALSE(IsProtobufBody("{\"kind\":\"ConfigMap\"}"));
  // Invalid UTF-8 in a string field is replaced, never thrown.
  std::string cm = Field(1, Field(1, "c")) + Entry(2, "k", "\xff\xfe");
  Result<Json> j = DecodeBody(api::ConfigMaps(), Envelope("v1", "ConfigMap", cm),
                              FieldValidation::kStrict, nullptr);
  CHECK(j.ok());
}

}  // namespace
}  // namespace pjemu::apiserver
