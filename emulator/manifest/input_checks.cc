#include "emulator/manifest/input_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace pjemu::manifest {
namespace {

// Length of the UTF-8 sequence at text[i] and its code point, or 0 when it is malformed.
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* cp) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  uint8_t b0 = byte(i);
  size_t len;
  uint32_t min;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, *cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, *cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, *cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (byte(i + k) & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

// YAML's printable set: tab, LF, CR, 0x20-0x7E, NEL, 0xA0-0xD7FF, 0xE000-0xFFFD, astral planes.
bool IsYamlPrintable(uint32_t cp) {
  return cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
}

}  // namespace

Status LocatedError(std::string_view source, int line, std::string message) {
  std::string text = fmt::format("{}:{}: {}", source, line, message);
  return Status(
      Code::kBadRequest, std::move(text),
      Json{{"file", std::string(source)}, {"line", line}, {"message", std::move(message)}});
}

int LineAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

Status CheckEncoding(std::string_view text, std::string_view source, bool yaml) {
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      return LocatedError(
          source, LineAt(text, i),
          fmt::format("invalid UTF-8 (byte 0x{:02x})", static_cast<uint8_t>(text[i])));
    }
    if (yaml && !IsYamlPrintable(cp)) {
      return LocatedError(source, LineAt(text, i),
                          fmt::format("control characters are not allowed (U+{:04X})", cp));
    }
    i += len;
  }
  return Status::Ok();
}

bool LooksLikeJson(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && text[i] == '{';
}

bool IsBlank(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#') {
      std::string_view rest = line.substr(first);
      bool marker = rest.rfind("---", 0) == 0 || rest.rfind("...", 0) == 0;
      if (!marker || rest.find_first_not_of(" \t\r", 3) != std::string_view::npos) return false;
    }
    pos = end + 1;
  }
  return true;
}

int TabIndentedLineNear(std::string_view text, int line) {
  int current = 1;
  size_t pos = 0;
  while (pos <= text.size() && current <= line) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (current >= line - 1) {
      std::string_view l = text.substr(pos, end - pos);
      size_t first = l.find_first_not_of(" \t");
      std::string_view indent = l.substr(0, first == std::string_view::npos ? l.size() : first);
      if (indent.find('\t') != std::string_view::npos && first != std::string_view::npos) {
        return current;
      }
    }
    pos = end + 1;
    ++current;
  }
  return 0;
}

}  // namespace pjemu::manifest
