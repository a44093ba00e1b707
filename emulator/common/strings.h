// String helpers the components share. Thread safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

namespace pjemu {

// parts with separator between each two ("a, b, c"); "" for none.
inline std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

}  // namespace pjemu
