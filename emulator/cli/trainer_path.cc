#include "emulator/cli/trainer_path.h"

#include <filesystem>

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

}  // namespace pjemu::cli
