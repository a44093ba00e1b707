// String helpers the components share. Thread safety: pure functions.
#pragma once

#include <boost/uuid/detail/sha1.hpp>
#include <fmt/format.h>

#include <cstdio>

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

// SHA-1 of text as 40 lowercase hex digits (names derived from content: a JobSet's job key, a
// Kueue Workload's name; not for security).
inline std::string Sha1Hex(std::string_view text) {
  boost::uuids::detail::sha1 sha;
  sha.process_bytes(text.data(), text.size());
  boost::uuids::detail::sha1::digest_type digest;
  sha.get_digest(digest);
  char hex[41];
  for (int i = 0; i < 5; ++i) std::snprintf(hex + 8 * i, 9, "%08x", static_cast<unsigned>(digest[i]));
  return std::string(hex, 40);
}

}  // namespace pjemu
