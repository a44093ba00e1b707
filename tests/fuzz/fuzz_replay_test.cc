// Replays every seed and every kept finding of the fuzz targets (seeds.txt and
// tests/fuzz/regressions/<target>/) through the same target functions the fuzz binaries run,
// so each crash ever found stays a failing unit test if it comes back, in every build.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {

void FuzzFail(const char* file, int line, const char* what) {
  throw std::logic_error(std::string("FUZZ_CHECK failed at ") + file + ":" + std::to_string(line) +
                         ": " + what);
}

namespace {

namespace fs = std::filesystem;

std::vector<std::string> SeedFolders(const std::string& target) {
  std::ifstream in(std::string(PJEMU_SOURCE_DIR) + "/tests/fuzz/seeds.txt");
  std::string line;
  std::vector<std::string> folders;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (!(words >> name) || name[0] == '#' || name != target) continue;
    for (std::string folder; words >> folder;) folders.push_back(folder);
  }
  folders.push_back("tests/fuzz/regressions/" + target);
  return folders;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("every fuzz seed and kept finding runs clean through its target", "[fuzz]") {
  for (const auto& target : kFuzzTargets) {
    int files = 0;
    for (const auto& folder : SeedFolders(target.name)) {
      fs::path dir = fs::path(PJEMU_SOURCE_DIR) / folder;
      if (!fs::is_directory(dir)) continue;
      for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (!entry.is_regular_file()) continue;
        std::string data = ReadFile(entry.path());
        INFO("target " << target.name << ", input " << entry.path().string());
        CHECK_NOTHROW(target.run(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
        ++files;
      }
    }
    INFO("target " << target.name);
    CHECK(files > 0);  // every target has a seed corpus
  }
}

}  // namespace pjemu::fuzz
