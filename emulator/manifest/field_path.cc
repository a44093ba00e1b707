// Manifest's line lookups and the field error helpers (declared in manifest.h).
#include <fmt/format.h>

#include "emulator/manifest/manifest.h"
#include "emulator/manifest/yaml_to_json.h"

namespace pjemu::manifest {

std::string FieldPathToPointer(std::string_view field_path) {
  std::string pointer;
  std::string token;
  bool have_token = false;
  auto flush = [&] {
    if (have_token) AppendPointerToken(pointer, token);
    token.clear();
    have_token = false;
  };
  for (size_t i = 0; i < field_path.size(); ++i) {
    char c = field_path[i];
    if (c == '.') {
      flush();
    } else if (c == '[') {
      flush();
      size_t close = field_path.find(']', i + 1);
      if (close == std::string_view::npos) close = field_path.size();
      token = std::string(field_path.substr(i + 1, close - i - 1));
      have_token = true;
      flush();
      i = close;
    } else {
      token.push_back(c);
      have_token = true;
    }
  }
  flush();
  return pointer;
}

std::string PointerToFieldPath(std::string_view pointer) {
  std::string path;
  size_t pos = 0;
  while (pos < pointer.size()) {
    size_t next = pointer.find('/', pos + 1);
    if (next == std::string_view::npos) next = pointer.size();
    std::string token;
    std::string_view raw = pointer.substr(pos + 1, next - pos - 1);
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size()) {
        token.push_back(raw[i + 1] == '1' ? '/' : '~');
        ++i;
      } else {
        token.push_back(raw[i]);
      }
    }
    bool index = !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
    if (index || token.find_first_of("./[]") != std::string::npos || token.empty()) {
      path += "[" + token + "]";
    } else {
      if (!path.empty()) path.push_back('.');
      path += token;
    }
    pos = next;
  }
  return path;
}

int Manifest::LineOfPointer(std::string_view pointer) const {
  std::string p(pointer);
  while (!p.empty()) {
    if (auto it = field_lines.find(p); it != field_lines.end()) return it->second;
    p.resize(p.rfind('/'));
  }
  return line;
}

int Manifest::LineOf(std::string_view field_path) const {
  return LineOfPointer(FieldPathToPointer(field_path));
}

std::string Manifest::Where(std::string_view field_path) const {
  return fmt::format("{}:{}", source, LineOf(field_path));
}

Status FieldError(const Manifest& manifest, std::string_view field_path, std::string_view message) {
  return Status(Code::kInvalid,
                fmt::format("{}: {}: {}", manifest.Where(field_path), field_path, message));
}

Status TypeError(const Manifest& manifest, std::string_view field_path, std::string_view expected) {
  return FieldError(manifest, field_path, fmt::format("expected {}", expected));
}

}  // namespace pjemu::manifest

namespace pjemu::manifest {

Status TypeError(const Manifest& manifest, const Json::json_pointer& pointer,
                 std::string_view expected) {
  return TypeError(manifest, PointerToFieldPath(pointer.to_string()), expected);
}

}  // namespace pjemu::manifest
