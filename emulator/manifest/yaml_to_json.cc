#include "emulator/manifest/yaml_to_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "emulator/manifest/input_checks.h"
#include "emulator/manifest/yaml_scalar.h"

namespace pjemu::manifest {
namespace {

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

std::string Quote(std::string_view s) { return Json(std::string(s)).dump(); }

}  // namespace

int LineOfNode(const YAML::Node& node, int fallback) {
  YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? fallback : mark.line + 1;
}

void AppendPointerToken(std::string& pointer, std::string_view token) {
  pointer.push_back('/');
  for (char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer.push_back(c);
    }
  }
}

YamlToJson::YamlToJson(std::string_view source, ConvertLimits limits,
                       std::map<std::string, int>* lines)
    : source_(source), limits_(limits), lines_(lines) {}

Result<Json> YamlToJson::Convert(const YAML::Node& root) {
  Json out;
  std::string pointer;
  int line = LineOfNode(root, 1);
  RETURN_IF_ERROR(Node(root, 0, line, pointer, &out));
  return out;
}

Status YamlToJson::Fail(ConvertFailure why, int line, const std::string& message) {
  failure_ = why;
  return LocatedError(source_, line, message);
}

void YamlToJson::Record(const std::string& pointer, int line) {
  if (lines_ != nullptr) lines_->emplace(pointer, line);
}

Status YamlToJson::Node(const YAML::Node& node, int depth, int line, std::string& pointer,
                        Json* out) {
  if (++nodes_ > limits_.max_nodes) {
    return Fail(
        ConvertFailure::kTooLarge, line,
        fmt::format("document expands to more than {} values (alias bomb?)", limits_.max_nodes));
  }
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      if (node.Tag() == std::string(kTagPrefix) + "str") {
        *out = "";  // "key: !!str" is an empty string, not null
      } else {
        *out = nullptr;
      }
      return Status::Ok();
    case YAML::NodeType::Scalar:
      return Scalar(node, line, out);
    case YAML::NodeType::Sequence:
    case YAML::NodeType::Map:
      if (depth >= limits_.max_depth) {
        return Fail(ConvertFailure::kTooDeep, line,
                    fmt::format("nesting is deeper than {} levels", limits_.max_depth));
      }
      return node.IsMap() ? Mapping(node, depth + 1, line, pointer, out)
                          : Sequence(node, depth + 1, line, pointer, out);
  }
  return Status::Ok();
}

Status YamlToJson::Scalar(const YAML::Node& node, int line, Json* out) {
  const std::string& text = node.Scalar();
  scalar_bytes_ += text.size();
  if (scalar_bytes_ > limits_.max_scalar_bytes) {
    return Fail(ConvertFailure::kTooLarge, line,
                fmt::format("document expands to more than {} bytes of scalars (alias bomb?)",
                            limits_.max_scalar_bytes));
  }
  const std::string& tag = node.Tag();
  std::string_view short_tag;
  if (tag.rfind(kTagPrefix, 0) == 0) short_tag = std::string_view(tag).substr(kTagPrefix.size());
  if (tag == "!" || short_tag == "str" || short_tag == "binary" ||
      (tag != "?" && short_tag.empty())) {
    // Quoted, block (| >), explicitly !!str, or an application tag: go-yaml keeps the text.
    *out = text;
    return Status::Ok();
  }
  Result<Json> v = ResolvePlainScalar(text);
  if (!v.ok()) return Fail(ConvertFailure::kYaml, line, v.status().message());
  if (!short_tag.empty()) {
    bool ok = (short_tag == "int" && v->is_number_integer()) ||
              (short_tag == "float" && v->is_number()) ||
              (short_tag == "bool" && v->is_boolean()) || (short_tag == "null" && v->is_null());
    if (!ok) {
      return Fail(ConvertFailure::kYaml, line,
                  fmt::format("cannot decode {} as a !!{}", Quote(text), short_tag));
    }
  }
  *out = std::move(v).value();
  return Status::Ok();
}

Result<std::string> YamlToJson::Key(const YAML::Node& key, int line) {
  if (!key.IsScalar()) {
    return Fail(ConvertFailure::kYaml, line,
                key.IsNull() ? "unsupported map key null" : "map keys must be scalars");
  }
  if (key.Tag() != "?") return key.Scalar();  // quoted or tagged: the text itself
  Result<std::string> k = ResolvePlainKey(key.Scalar());
  if (!k.ok()) return Fail(ConvertFailure::kYaml, line, k.status().message());
  return k;
}

Status YamlToJson::Mapping(const YAML::Node& node, int depth, int line, std::string& pointer,
                           Json* out) {
  *out = Json::object();
  std::set<std::string> explicit_keys;
  for (auto it = node.begin(); it != node.end(); ++it) {
    int key_line = LineOfNode(it->first, line);
    if (it->first.IsScalar() && it->first.Tag() == "?" && it->first.Scalar() == "<<") {
      // go-yaml v2 applies merge keys in document order: a merge overwrites the keys set
      // before it and later keys overwrite the merged ones.
      RETURN_IF_ERROR(Merge(it->second, depth, key_line, out));
      continue;
    }
    ASSIGN_OR_RETURN(std::string key, Key(it->first, key_line));
    if (!explicit_keys.insert(key).second) {
      return Fail(ConvertFailure::kDuplicateKey, key_line,
                  fmt::format("duplicate key {}", Quote(key)));
    }
    size_t mark = pointer.size();
    AppendPointerToken(pointer, key);
    Record(pointer, key_line);
    Json value;
    Status s = Node(it->second, depth, key_line, pointer, &value);
    pointer.resize(mark);
    RETURN_IF_ERROR(s);
    (*out)[key] = std::move(value);
  }
  return Status::Ok();
}

Status YamlToJson::Merge(const YAML::Node& value, int depth, int line, Json* out) {
  std::vector<YAML::Node> sources;
  if (value.IsMap()) {
    sources.push_back(value);
  } else if (value.IsSequence()) {
    for (const YAML::Node& item : value) sources.push_back(item);
  }
  bool all_maps = !sources.empty() && std::all_of(sources.begin(), sources.end(),
                                                  [](const YAML::Node& n) { return n.IsMap(); });
  if (!all_maps) {
    return Fail(ConvertFailure::kYaml, line,
                "map merge requires map or sequence of maps as the value");
  }
  // In a sequence the earlier maps win, so apply them last.
  for (auto src = sources.rbegin(); src != sources.rend(); ++src) {
    Json merged;
    std::string scratch;  // merged fields keep the line of the mapping they came from
    YamlToJson sub(source_, limits_, nullptr);
    sub.nodes_ = nodes_;
    sub.scalar_bytes_ = scalar_bytes_;
    Status s = sub.Node(*src, depth, line, scratch, &merged);
    nodes_ = sub.nodes_;
    scalar_bytes_ = sub.scalar_bytes_;
    if (!s.ok()) {
      failure_ = sub.failure_;
      return s;
    }
    for (auto& [k, v] : merged.items()) (*out)[k] = v;
  }
  return Status::Ok();
}

Status YamlToJson::Sequence(const YAML::Node& node, int depth, int line, std::string& pointer,
                            Json* out) {
  *out = Json::array();
  size_t index = 0;
  for (const YAML::Node& item : node) {
    int item_line = LineOfNode(item, line);
    size_t mark = pointer.size();
    AppendPointerToken(pointer, std::to_string(index++));
    Record(pointer, item_line);
    Json value;
    Status s = Node(item, depth, item_line, pointer, &value);
    pointer.resize(mark);
    RETURN_IF_ERROR(s);
    out->push_back(std::move(value));
  }
  return Status::Ok();
}

}  // namespace pjemu::manifest
