// Globs fixtures/invalid/<case>.{yaml,json}: each must fail to load with exactly the one-line
// message in <case>.want-error.txt. UPDATE_GOLDEN=1 rewrites the .want-error.txt files.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/manifest/manifest.h"

namespace pjemu::manifest {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("golden: every fixtures/invalid manifest fails with its expected error", "[manifest]") {
  fs::path dir = fs::path(PJEMU_SOURCE_DIR) / "fixtures" / "invalid";
  const char* update = std::getenv("UPDATE_GOLDEN");
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    fs::path input = entry.path();
    if (input.extension() != ".yaml" && input.extension() != ".json") continue;
    fs::path want_path = dir / (input.stem().string() + ".want-error.txt");
    DYNAMIC_SECTION(input.filename().string()) {
      auto r = LoadManifestText(Slurp(input), input.filename().string());
      REQUIRE_FALSE(r.ok());
      const std::string& got = r.status().message();
      CHECK(got.find('\n') == std::string::npos);
      if (update != nullptr && std::string(update) == "1") {
        std::ofstream(want_path, std::ios::binary) << got << "\n";
      }
      REQUIRE(fs::exists(want_path));
      std::string want = Slurp(want_path);
      while (!want.empty() && (want.back() == '\n' || want.back() == '\r')) want.pop_back();
      CHECK(got == want);
    }
    ++cases;
  }
  CHECK(cases >= 20);
}

TEST_CASE("every fixtures/invalid expectation has its input", "[manifest]") {
  fs::path dir = fs::path(PJEMU_SOURCE_DIR) / "fixtures" / "invalid";
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    const std::string suffix = ".want-error.txt";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string stem = name.substr(0, name.size() - suffix.size());
    CAPTURE(name);
    CHECK((fs::exists(dir / (stem + ".yaml")) || fs::exists(dir / (stem + ".json"))));
  }
}

}  // namespace
}  // namespace pjemu::manifest
