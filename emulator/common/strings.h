// String helpers the components share. Thread safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pjemu {

// parts with separator between each two ("a, b, c"); "" for none.
inline std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

// text with ASCII A-Z folded to a-z (Kubernetes names, header names, kinds; not locale aware).
inline std::string AsciiLower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

// FNV-1a, 32 bits: a short, stable tag for a string (not for security).
inline std::uint32_t Fnv1a32(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

}  // namespace pjemu
