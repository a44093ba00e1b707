// Scalars and keys are typed as kubectl types them (sigs.k8s.io/yaml over go-yaml v2).
#include <catch2/catch.hpp>

#include "emulator/manifest/manifest.h"
#include "emulator/manifest/yaml_scalar.h"

namespace pjemu::manifest {
namespace {

// The JSON value that `v: <yaml>` loads into.
Result<Json> ValueOf(const std::string& yaml) {
  auto r = LoadManifestText("apiVersion: v1\nkind: ConfigMap\nv: " + yaml + "\n", "t.yaml");
  if (!r.ok()) return r.status();
  return r->at(0).object["v"];
}

TEST_CASE("plain scalars resolve with YAML 1.1 rules", "[manifest]") {
  auto [yaml, want] = GENERATE(table<std::string, std::string>({
      {"true", "true"},
      {"True", "true"},
      {"TRUE", "true"},
      {"yes", "true"},
      {"Yes", "true"},
      {"on", "true"},
      {"ON", "true"},
      {"y", "true"},
      {"Y", "true"},
      {"false", "false"},
      {"no", "false"},
      {"Off", "false"},
      {"n", "false"},
      {"tRUE", "\"tRUE\""},
      {"yEs", "\"yEs\""},
      {"~", "null"},
      {"null", "null"},
      {"NULL", "null"},
      {"", "null"},
      {"nil", "\"nil\""},
      {"0", "0"},
      {"42", "42"},
      {"-7", "-7"},
      {"+7", "7"},
      {"1_000", "1000"},
      {"0x1F", "31"},
      {"0o17", "15"},
      {"017", "15"},
      {"0b101", "5"},
      {"-0x10", "-16"},
      {"08", "8"},
      {"1.5", "1.5"},
      {".5", "0.5"},
      {"1e3", "1000"},
      {"1.0", "1"},
      {"-2.5e-1", "-0.25"},
      {"9223372036854775807", "9223372036854775807"},
      {"18446744073709551615", "1.8446744073709552e+19"},
      {"9223372036854775808", "9.223372036854776e+18"},
      {"1.2.3", "\"1.2.3\""},
      {"0x", "\"0x\""},
      {"1e", "\"1e\""},
      {"12:30", "\"12:30\""},
      {"2024-06-21T04:41:27Z", "\"2024-06-21T04:41:27Z\""},
      {"500m", "\"500m\""},
      {"2Gi", "\"2Gi\""},
      {"<training image>", "\"<training image>\""},
      {"\"true\"", "\"true\""},
      {"'42'", "\"42\""},
      {"\"\"", "\"\""},
      {"!!str 42", "\"42\""},
      {"!!str", "\"\""},
      {"!!float 3", "3"},
      {"|\n  a\n  b", "\"a\\nb\\n\""},
      {">-\n  a\n  b", "\"a b\""},
      {"[1, two, 'three']", "[1,\"two\",\"three\"]"},
  }));
  CAPTURE(yaml);
  Result<Json> v = ValueOf(yaml);
  INFO(v.status().message());
  REQUIRE(v.ok());
  CHECK(v->dump() == want);
}

TEST_CASE("scalars JSON cannot carry are errors naming the line", "[manifest]") {
  auto [yaml, want] = GENERATE(table<std::string, std::string>({
      {".inf", "t.yaml:3: unsupported value .inf: JSON has no infinity or NaN"},
      {"-.Inf", "t.yaml:3: unsupported value -.Inf: JSON has no infinity or NaN"},
      {".nan", "t.yaml:3: unsupported value .nan: JSON has no infinity or NaN"},
      {"!!int abc", "t.yaml:3: cannot decode \"abc\" as a !!int"},
      {"!!bool 1", "t.yaml:3: cannot decode \"1\" as a !!bool"},
  }));
  CAPTURE(yaml);
  Result<Json> v = ValueOf(yaml);
  REQUIRE_FALSE(v.ok());
  CHECK(v.status().message() == want);
}

TEST_CASE("plain map keys become JSON keys as sigs.k8s.io/yaml builds them", "[manifest]") {
  auto r = LoadManifestText(
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  yes: a\n  off: b\n  1: c\n  0x10: d\n"
      "  \"no\": e\n  1.5: f\n  key: g\n",
      "k.yaml");
  REQUIRE(r.ok());
  CHECK(r->at(0).object["data"] == Json{{"true", "a"},
                                        {"false", "b"},
                                        {"1", "c"},
                                        {"16", "d"},
                                        {"no", "e"},
                                        {"1.5", "f"},
                                        {"key", "g"}});
  CHECK(ResolvePlainKey("~").status().message() == "unsupported map key ~");
}

TEST_CASE("a null map key is an error with its line", "[manifest]") {
  auto r = LoadManifestText("apiVersion: v1\nkind: ConfigMap\ndata:\n  ~: a\n", "k.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "k.yaml:4: unsupported map key null");
}

}  // namespace
}  // namespace pjemu::manifest
