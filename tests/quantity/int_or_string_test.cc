// IntOrString decodes like intstr.IntOrString and scales percentages like
// intstr.GetScaledValueFromIntOrPercent.
#include "emulator/api/int_or_string.h"

#include <catch2/catch.hpp>

namespace pjemu::api {
namespace {

TEST_CASE("IntOrString decodes ints and strings from JSON", "[quantity]") {
  auto i = IntOrString::FromJson(Json(8080));
  REQUIRE(i.ok());
  CHECK(i->type() == IntOrString::Type::kInt);
  CHECK(i->int_value() == 8080);
  CHECK(i->ToJson() == 8080);
  auto s = IntOrString::FromJson(Json("http"));
  REQUIRE(s.ok());
  CHECK(s->type() == IntOrString::Type::kString);
  CHECK(s->String() == "http");
  CHECK(s->ToJson() == "http");
  CHECK(IntOrString::FromJson(Json("8080"))->type() == IntOrString::Type::kString);
  CHECK(IntOrString::FromJson(Json(8080.0))->int_value() == 8080);
  CHECK(IntOrString::FromJson(Json(nullptr))->int_value() == 0);
}

TEST_CASE("IntOrString rejects other JSON types with Go's message", "[quantity]") {
  auto [value, want] = GENERATE(table<Json, std::string>({
      {Json(true), "json: cannot unmarshal bool into Go value of type int32"},
      {Json(1.5), "json: cannot unmarshal number 1.5 into Go value of type int32"},
      {Json(int64_t{3000000000}),
       "json: cannot unmarshal number 3000000000 into Go value of type int32"},
      {Json::array({1}), "json: cannot unmarshal array into Go value of type int32"},
      {Json::object({{"a", 1}}), "json: cannot unmarshal object into Go value of type int32"},
  }));
  CAPTURE(value.dump());
  auto r = IntOrString::FromJson(value);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == want);
}

TEST_CASE("percentages scale against a total, rounding up or down", "[quantity]") {
  auto [value, total, round_up, want] = GENERATE(table<IntOrString, int, bool, int>({
      {IntOrString::FromString("50%"), 10, true, 5},
      {IntOrString::FromString("25%"), 10, true, 3},
      {IntOrString::FromString("25%"), 10, false, 2},
      {IntOrString::FromString("100%"), 7, false, 7},
      {IntOrString::FromString("0%"), 7, true, 0},
      {IntOrString::FromInt(3), 100, true, 3},
  }));
  CAPTURE(value.String(), total, round_up);
  auto r = ScaledValueFromIntOrPercent(value, total, round_up);
  REQUIRE(r.ok());
  CHECK(*r == want);
}

TEST_CASE("a string without % or with a bad number is not a percentage", "[quantity]") {
  CHECK(ScaledValueFromIntOrPercent(IntOrString::FromString("50"), 10, true).status().message() ==
        "invalid type: string is not a percentage");
  CHECK(ScaledValueFromIntOrPercent(IntOrString::FromString("x%"), 10, true).status().message() ==
        "invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": "
        "invalid syntax");
  CHECK(ScaledValueFromIntOrPercent(IntOrString::FromString("%"), 10, true).status().message() ==
        "invalid value for IntOrString: invalid value \"%\": strconv.Atoi: parsing \"\": "
        "invalid syntax");
}

}  // namespace
}  // namespace pjemu::api
