#include "emulator/cli/yaml_output.h"

#include <algorithm>
#include <regex>

namespace pjemu::cli {
namespace {

// A string go-yaml would read back as another type (bool, null, number, timestamp): go-yaml v2
// (kubectl's sigs.k8s.io/yaml) writes those double-quoted, and other unsafe strings
// single-quoted, as kubectl 1.20 and 1.33 print `creationTimestamp: "..."`, `x: "0"`.
bool ResolvesToOtherType(const std::string& s) {
  if (s.empty()) return true;
  static const std::regex kSpecial(
      R"(^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~)$)");
  static const std::regex kNumber(R"(^[-+]?(\.?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o?[0-7]+|\.inf|\.Inf|\.nan|\.NaN)$)");
  // go-yaml also quotes what would read back as a timestamp ("2024-06-21T04:41:27Z").
  static const std::regex kTimestamp(R"(^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$)");
  return std::regex_match(s, kSpecial) || std::regex_match(s, kNumber) ||
         std::regex_match(s, kTimestamp);
}

bool NeedsQuotes(const std::string& s) {
  if (ResolvesToOtherType(s)) return true;
  if (s.front() == ' ' || s.back() == ' ') return true;
  if (std::string("-?:,[]{}#&*!|>'\"%@`").find(s.front()) != std::string::npos) {
    // "-x" and "--epochs=1" are fine plain when not followed by a space.
    if (!(s.front() == '-' && s.size() > 1 && s[1] != ' ')) return true;
  }
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return true;
  if (s.back() == ':') return true;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return true;
  }
  return false;
}

std::string Scalar(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return v.dump();
  std::string s = v.get<std::string>();
  if (s.find('\n') != std::string::npos || !NeedsQuotes(s)) {
    if (s.find('\n') == std::string::npos) return s;
    return Json(s).dump();  // double-quoted with escapes, valid YAML
  }
  if (ResolvesToOtherType(s)) return Json(s).dump();  // "0", "2026-11-22T10:52:52Z", ""
  if (s.find('\'') == std::string::npos && s.find('\\') == std::string::npos &&
      std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20; })) {
    return "'" + s + "'";
  }
  return Json(s).dump();
}

bool IsEmptyContainer(const Json& v) { return (v.is_object() || v.is_array()) && v.empty(); }

void Emit(const Json& v, int indent, std::string* out);

void EmitObject(const Json& v, int indent, std::string* out, bool first_inline) {
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!(first && first_inline)) out->append(indent, ' ');
    first = false;
    out->append(NeedsQuotes(it.key()) ? Scalar(Json(it.key())) : it.key());
    out->push_back(':');
    const Json& child = it.value();
    if (IsEmptyContainer(child)) {
      out->append(child.is_object() ? " {}\n" : " []\n");
    } else if (child.is_object()) {
      out->push_back('\n');
      EmitObject(child, indent + 2, out, false);
    } else if (child.is_array()) {
      out->push_back('\n');
      Emit(child, indent, out);  // go-yaml: items at the key's indentation
    } else {
      out->push_back(' ');
      out->append(Scalar(child));
      out->push_back('\n');
    }
  }
}

void Emit(const Json& v, int indent, std::string* out) {
  if (v.is_object()) {
    if (v.empty()) {
      out->append(indent, ' ');
      out->append("{}\n");
      return;
    }
    EmitObject(v, indent, out, false);
  } else if (v.is_array()) {
    for (const Json& item : v) {
      out->append(indent, ' ');
      out->append("- ");
      if (item.is_object() && !item.empty()) {
        EmitObject(item, indent + 2, out, true);
      } else if (item.is_array() && !item.empty()) {
        out->push_back('\n');
        Emit(item, indent + 2, out);
      } else if (IsEmptyContainer(item)) {
        out->append(item.is_object() ? "{}\n" : "[]\n");
      } else {
        out->append(Scalar(item));
        out->push_back('\n');
      }
    }
  } else {
    out->append(indent, ' ');
    out->append(Scalar(v));
    out->push_back('\n');
  }
}

}  // namespace

std::string ToYaml(const Json& value) {
  std::string out;
  Emit(value, 0, &out);
  return out;
}

}  // namespace pjemu::cli
