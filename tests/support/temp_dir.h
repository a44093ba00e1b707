// A test's scratch directory: fresh under the system's temporary folder (mkdtemp, mode 0700), and
// removed with everything in it, symlinks not followed, when the object goes, whether the test
// passed, failed a REQUIRE or threw. Not copyable. Throws std::runtime_error when mkdtemp fails.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace pjemu::testing {

class TempDir {
 public:
  // `prefix` names the directory (PREFIX-XXXXXX), so that one left by a killed test says whose.
  explicit TempDir(std::string_view prefix = "pjemu-test") {
    std::string name =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("mkdtemp " + name + ": " + std::strerror(errno));
    }
    path_ = std::move(name);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace pjemu::testing
