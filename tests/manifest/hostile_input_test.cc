// Generated hostile manifests: every one gives a one-line error (or loads), never a crash.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <sstream>

#include "emulator/manifest/manifest.h"

namespace pjemu::manifest {
namespace {

constexpr std::string_view kHead = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";

std::string ReadSeed(const std::string& name) {
  std::ifstream in(std::string(PJEMU_SOURCE_DIR) + "/fixtures/seeds/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void CheckOneLineOutcome(const Result<std::vector<Manifest>>& r) {
  if (r.ok()) return;
  INFO(r.status().message());
  CHECK_FALSE(r.status().message().empty());
  CHECK(r.status().message().find('\n') == std::string::npos);
}

TEST_CASE("a manifest over 3 MiB is rejected before parsing", "[manifest]") {
  std::string text(kHead);
  text += "data:\n  big: \"" + std::string(kMaxManifestBytes, 'a') + "\"\n";
  auto r = LoadManifestText(text, "big.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kRequestEntityTooLarge);
  CHECK(r.status().message() == "big.yaml: manifest is " + std::to_string(text.size()) +
                                    " bytes, more than the limit of 3145728 bytes");
}

TEST_CASE("a huge string under the size limit loads intact", "[manifest]") {
  std::string big(2 * 1024 * 1024, 'x');
  auto r = LoadManifestText(std::string(kHead) + "data:\n  big: " + big + "\n", "big.yaml");
  REQUIRE(r.ok());
  CHECK(r->at(0).object["data"]["big"].get_ref<const std::string&>() == big);
}

TEST_CASE("block-style nesting deeper than the limit is an error with its line", "[manifest]") {
  std::string text(kHead);
  text += "data:\n";
  for (int i = 0; i < 100; ++i) text += std::string(2 * (i + 1), ' ') + "k:\n";
  auto r = LoadManifestText(text, "deep.yaml");
  REQUIRE_FALSE(r.ok());
  // data is level 2 (the document is level 1), so level 65 is the 63rd "k:" below line 4.
  CHECK(r.status().message() == "deep.yaml:67: nesting is deeper than 64 levels");
}

TEST_CASE("flow nesting far beyond yaml-cpp's own recursion guard is a clean error", "[manifest]") {
  std::string text(kHead);
  text += "data: " + std::string(100000, '[') + "\n";
  auto r = LoadManifestText(text, "deep.yaml");
  REQUIRE_FALSE(r.ok());
  CheckOneLineOutcome(r);
  const std::string& m = r.status().message();
  CHECK(m.rfind("deep.yaml:", 0) == 0);
  CHECK(m.ends_with(": nesting is deeper than 64 levels"));
}

TEST_CASE("self-referencing aliases and merge keys stop at the nesting limit", "[manifest]") {
  for (std::string body : {"a: &x [*x]\n", "a: &x {<<: *x}\n", "a: &x {b: *x}\n"}) {
    CAPTURE(body);
    auto r = LoadManifestText(std::string(kHead) + body, "cycle.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "cycle.yaml:4: nesting is deeper than 64 levels");
  }
}

TEST_CASE("deep JSON nesting is an error", "[manifest]") {
  std::string text =
      "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"data\": " + std::string(5000, '[') +
      std::string(5000, ']') + "}";
  auto r = LoadManifestText(text, "deep.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "deep.json:1: nesting is deeper than 64 levels");
}

TEST_CASE("ten thousand small documents load", "[manifest]") {
  std::string text;
  for (int i = 0; i < 10000; ++i) {
    text += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c" + std::to_string(i) + "}\n";
  }
  auto r = LoadManifestText(text, "many.yaml");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 10000);
  CHECK(r->back().line == 4 * 9999 + 2);
}

// yaml-cpp 0.7's LoadAll re-read a document whose root is a ',' forever, allocating until the
// process died (fuzz_manifest's manifest-timeout, kept in tests/fuzz/regressions/manifest/).
TEST_CASE("a ',' where a document's root belongs is an error, not an endless load", "[manifest]") {
  struct Case {
    std::string text;
    std::string want;
  };
  for (const Case& c :
       std::vector<Case>{{",", "comma.yaml:1: yaml: did not find expected node content"},
                         {" ,\n", "comma.yaml:1: yaml: did not find expected node content"},
                         {"[a],\n", "comma.yaml:1: yaml: did not find expected node content"},
                         {std::string(kHead) + "---\n,\n  a: b\n",
                          "comma.yaml:5: yaml: did not find expected node content"}}) {
    CAPTURE(c.text);
    auto r = LoadManifestText(c.text, "comma.yaml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == c.want);
  }
  // Documents after a normal one still load.
  auto r = LoadManifestText(std::string(kHead) + "---\n" + std::string(kHead), "two.yaml");
  REQUIRE(r.ok());
  CHECK(r->size() == 2);
}

TEST_CASE("every truncation of the seed manifest loads or fails on one line", "[manifest]") {
  std::string seed = ReadSeed("pytorch_job_mnist_nccl.yaml");
  REQUIRE(seed.size() > 500);
  size_t failures = 0;
  for (size_t n = 0; n < seed.size(); ++n) {
    auto r = LoadManifestText(std::string_view(seed).substr(0, n), "cut.yaml");
    CheckOneLineOutcome(r);
    if (!r.ok()) ++failures;
  }
  // Cuts before "kind" or inside the job leave errors; many other cuts are still valid YAML.
  CHECK(failures > 50);
  CHECK(failures < seed.size());
}

TEST_CASE("seeded random bytes and mutations never crash the loader", "[manifest]") {
  std::string seed = ReadSeed("pytorch-simple.yaml");
  std::mt19937 rng(20240621);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 300; ++round) {
    std::string text = seed;
    int edits = 1 + round % 8;
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(byte(rng));
          break;
        case 1:
          text.insert(at, 1, "{}[]:-&*!|>'\"#%@`,?\t\n"[rng() % 21]);
          break;
        default:
          text.erase(at, 1 + rng() % 20);
          break;
      }
    }
    CheckOneLineOutcome(LoadManifestText(text, "fuzz.yaml"));
    std::string garbage(64 + rng() % 512, '\0');
    for (char& c : garbage) c = static_cast<char>(byte(rng));
    CheckOneLineOutcome(LoadManifestText(garbage, "garbage.bin"));
  }
}

}  // namespace
}  // namespace pjemu::manifest
