// Resource quantities parse, round and print as k8s.io/apimachinery's resource.Quantity.
#include <catch2/catch.hpp>

#include "emulator/api/resource_quantity.h"

namespace pjemu::api {
namespace {

Quantity MustParse(const std::string& s) {
  Result<Quantity> q = Quantity::Parse(s);
  INFO(s << ": " << q.status().message());
  REQUIRE(q.ok());
  return *q;
}

TEST_CASE("valid quantities: value, milli value, String and canonical form", "[quantity]") {
  // Expected values follow apimachinery's quantity_test.go and resource semantics.
  auto [text, value, milli, str, canonical] =
      GENERATE(table<std::string, int64_t, int64_t, std::string, std::string>({
          {"0", 0, 0, "0", "0"},
          {"1", 1, 1000, "1", "1"},
          {"500m", 1, 500, "500m", "500m"},
          {"1500m", 2, 1500, "1500m", "1500m"},
          {"0.5", 1, 500, "500m", "500m"},
          {".5", 1, 500, "500m", "500m"},
          {"1.5", 2, 1500, "1500m", "1500m"},
          {"2Gi", 2147483648, 2147483648000, "2Gi", "2Gi"},
          {"1024Mi", 1073741824, 1073741824000, "1Gi", "1Gi"},
          {"1Ki", 1024, 1024000, "1Ki", "1Ki"},
          {"1.5Gi", 1610612736, 1610612736000, "1536Mi", "1536Mi"},
          {"0.5Ki", 512, 512000, "512", "512"},
          {"100M", 100000000, 100000000000, "100M", "100M"},
          {"1000", 1000, 1000000, "1k", "1k"},
          {"1000000", 1000000, 1000000000, "1M", "1M"},
          {"1e3", 1000, 1000000, "1e3", "1e3"},
          {"1E3", 1000, 1000000, "1E3", "1e3"},
          {"1.5e3", 1500, 1500000, "1500", "1500"},
          {"1e-3", 1, 1, "1e-3", "1e-3"},
          {"+1", 1, 1000, "+1", "1"},
          {"-1", -1, -1000, "-1", "-1"},
          {"-500m", -1, -500, "-500m", "-500m"},
          {"01", 1, 1000, "01", "1"},
          {"100u", 1, 1, "100u", "100u"},
          {"1n", 1, 1, "1n", "1n"},
          {"0.0000000001", 1, 1, "1n", "1n"},
          {"12E", INT64_MAX, INT64_MAX, "12E", "12E"},  // value capped, text exact
          {"1k", 1000, 1000000, "1k", "1k"},
          {"5G", 5000000000, 5000000000000, "5G", "5G"},
          {"1.", 1, 1000, "1.", "1"},
          {"Gi", 0, 0, "0", "0"},  // an empty number is 0 in Kubernetes too
          {"-", 0, 0, "0", "0"},
      }));
  CAPTURE(text);
  Quantity q = MustParse(text);
  CHECK(q.Value() == value);
  CHECK(q.MilliValue() == milli);
  CHECK(q.String() == str);
  CHECK(q.CanonicalString() == canonical);
  // The canonical string parses back to the same amount.
  CHECK(MustParse(q.CanonicalString()) == q);
}

TEST_CASE("invalid quantities fail with Kubernetes' messages", "[quantity]") {
  const std::string format(kQuantityFormatError);
  const std::string suffix(kQuantitySuffixError);
  auto [text, want] = GENERATE_COPY(table<std::string, std::string>({
      {"", format},
      {"1.2.3", format},
      {"5 Gi", format},
      {" 5", format},
      {"1Zi", format},
      {"abc", format},
      {"1e3.5", format},
      {"1ki", suffix},
      {"1Mb", format},
      {"1mi", suffix},
      {"1i", suffix},
      {"1e", suffix},
      {"1KiB", format},
      {"1--1", format},
  }));
  CAPTURE(text);
  Result<Quantity> q = Quantity::Parse(text);
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().code() == Code::kBadRequest);
  CHECK(q.status().message() == want);
}

TEST_CASE("the exact regular-expression message is Kubernetes' ErrFormatWrong", "[quantity]") {
  CHECK(Quantity::Parse("1.2.3").status().message() ==
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

TEST_CASE("quantities decode from JSON strings and numbers", "[quantity]") {
  CHECK(Quantity::FromJson(Json("  250m ")).value().MilliValue() == 250);
  CHECK(Quantity::FromJson(Json(2)).value().String() == "2");
  CHECK(Quantity::FromJson(Json(0.25)).value().MilliValue() == 250);
  CHECK(Quantity::FromJson(Json(nullptr)).value().IsZero());
  CHECK(Quantity::FromJson(Json(true)).status().message() == std::string(kQuantityFormatError));
  CHECK(Quantity::FromJson(Json::object()).status().message() == std::string(kQuantityFormatError));
  CHECK(Quantity::FromJson(Json("1Gi")).value().ToJson() == "1Gi");
}

TEST_CASE("constructed quantities print canonically and compare", "[quantity]") {
  CHECK(Quantity::FromValue(2048, QuantityFormat::kBinarySI).String() == "2Ki");
  CHECK(Quantity::FromValue(1000, QuantityFormat::kBinarySI).String() == "1k");
  CHECK(Quantity::FromMilli(1500, QuantityFormat::kDecimalSI).String() == "1500m");
  CHECK(Quantity::FromMilli(2000, QuantityFormat::kDecimalSI).String() == "2");
  CHECK(Quantity::FromValue(5, QuantityFormat::kDecimalExponent).String() == "5");
  CHECK(Quantity::FromValue(5000, QuantityFormat::kDecimalExponent).String() == "5e3");
  CHECK(MustParse("1Gi").Cmp(MustParse("1G")) == 1);
  CHECK(MustParse("1000m").Cmp(MustParse("1")) == 0);
  CHECK(MustParse("-1").Sign() == -1);
  CHECK(MustParse("1Ki").format() == QuantityFormat::kBinarySI);
  CHECK(MustParse("1.5Ki").format() == QuantityFormat::kBinarySI);
  CHECK(MustParse("0.5Ki").format() == QuantityFormat::kBinarySI);
  CHECK(MustParse("1e3").format() == QuantityFormat::kDecimalExponent);
}

TEST_CASE("a BinarySI value that is no whole multiple of 1024 settles in two rounds",
          "[quantity]") {
  // kubectl 1.20 prints 687.5Ki as 704000 and 704000 as 704k (resource.Quantity's fallback to a
  // plain integer, which reads back as DecimalSI): found by fuzz_quantity.
  CHECK(MustParse("687.5Ki").CanonicalString() == "704000");
  CHECK(MustParse("704000").CanonicalString() == "704k");
  CHECK(MustParse("704k").CanonicalString() == "704k");
  CHECK(MustParse("1.5Ki").CanonicalString() == "1536");
  CHECK(MustParse("1536").CanonicalString() == "1536");
}

TEST_CASE("decimal quantities above 2^63-1 units keep their exact text", "[quantity]") {
  CHECK(MustParse("123456789012345678901234567890").String() == "123456789012345678901234567890");
  CHECK(MustParse("-.8e76").String() == "-8e75");
  CHECK(MustParse("123456789012345678901234567890.0000000001").String() ==
        "123456789012345678901234567890000000001n");
  CHECK(MustParse("1000E").String() == "1");  // Kubernetes drops suffixes past E (kubectl 1.32)
  CHECK(MustParse("20000000000000000000k").String() == "20");  // 2e22: the same dropped suffix
}

TEST_CASE("huge quantities are capped at 2^63-1 units", "[quantity]") {
  CHECK(MustParse("16Ei").Value() == INT64_MAX);
  CHECK(MustParse("8Ei").Value() == INT64_MAX);
  CHECK(MustParse("1e30").Value() == INT64_MAX);
  CHECK(MustParse("99999999999999999999999999999999999999999999").Value() == INT64_MAX);
  CHECK(MustParse("-1e30").Value() == INT64_MIN + 1);
}

}  // namespace
}  // namespace pjemu::api
