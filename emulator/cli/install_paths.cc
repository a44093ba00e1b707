#include "emulator/cli/install_paths.h"

#include <filesystem>

#ifndef PJEMU_SOURCE_DIR
#define PJEMU_SOURCE_DIR "."
#endif

namespace pjemu::cli {

std::string DefaultTrainerPath() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto sibling = self.parent_path() / "pjemu-trainer";
    if (std::filesystem::exists(sibling, ec)) return sibling.string();
  }
  return "pjemu-trainer";
}

std::string DefaultImageMap() {
  std::error_code ec;
  const std::string local = "fixtures/images.yaml";
  if (std::filesystem::exists(local, ec)) return local;
  // An installed pjemu: <prefix>/bin/pjemu and <prefix>/share/pjemu/images.yaml.
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = self.parent_path().parent_path() / "share" / "pjemu" / "images.yaml";
    if (std::filesystem::exists(installed, ec)) return installed.string();
  }
  std::string built = std::string(PJEMU_SOURCE_DIR) + "/fixtures/images.yaml";
  if (std::filesystem::exists(built, ec)) return built;
  return local;
}

}  // namespace pjemu::cli
