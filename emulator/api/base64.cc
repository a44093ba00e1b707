#include "emulator/api/base64.h"

#include <array>

namespace pjemu::api {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> DecodeTable() {
  std::array<int, 256> t{};
  for (int& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
  return t;
}
constexpr std::array<int, 256> kDecode = DecodeTable();

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view text, std::size_t* bad_byte) {
  auto fail = [&](std::size_t at) -> std::optional<std::string> {
    if (bad_byte) *bad_byte = at;
    return std::nullopt;
  };
  std::string out;
  std::size_t i = 0;
  for (; i + 4 <= text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && k >= 2 && i + 4 == text.size()) {
        if (k == 2 && text[i + 3] != '=') return fail(i + 3);
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return fail(i + k);
      v[k] = kDecode[static_cast<unsigned char>(c)];
      if (v[k] < 0) return fail(i + k);
    }
    const std::uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  if (i != text.size()) {
    // A short final group: Go reports the first byte past the last full quantum it could read.
    for (std::size_t k = i; k < text.size(); ++k) {
      if (kDecode[static_cast<unsigned char>(text[k])] < 0) return fail(k);
    }
    return fail(text.size());
  }
  return out;
}

}  // namespace pjemu::api
