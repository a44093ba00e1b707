#include "emulator/api/field_schema.h"

#include <mutex>
#include <sstream>
#include <unordered_map>

namespace pjemu::api {

const FieldSchema& FieldSchema::Default() {
  static const FieldSchema kDefault;
  return kDefault;
}

const FieldSchema& FieldSchema::Child(std::string_view name) const {
  if (shape == Shape::kMap) return Item();
  if (children_.empty()) return Default();
  auto it = children_.find(name);
  return it == children_.end() ? Default() : *it->second;
}

const FieldSchema& FieldSchema::Item() const { return element_ ? *element_ : Default(); }

FieldSchema& FieldSchema::Ensure(const std::string& segment) {
  if (segment == "[]" || segment == "*") {
    if (!element_) element_ = std::make_unique<FieldSchema>();
    return *element_;
  }
  auto& slot = children_[segment];
  if (!slot) slot = std::make_unique<FieldSchema>();
  return *slot;
}

namespace {

// "a.b[].c" -> {"a", "b", "[]", "c"}.
std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '.')) {
    bool item = part.size() > 2 && part.compare(part.size() - 2, 2, "[]") == 0;
    if (item) part.resize(part.size() - 2);
    if (!part.empty()) out.push_back(part);
    if (item) out.push_back("[]");
  }
  return out;
}

Status CompileRule(const std::string& line, FieldSchema& root) {
  std::istringstream in(line);
  std::string path, directive;
  in >> path >> directive;
  auto bad = [&] { return Status(Code::kInvalid, "bad field rule: \"" + line + "\""); };
  if (path.empty() || directive.empty()) return bad();
  FieldSchema* node = &root;
  for (const auto& segment : Segments(path)) node = &node->Ensure(segment);
  if (directive == "keys") {
    node->list = FieldSchema::ListType::kKeyed;
    for (std::string key; in >> key;) {
      auto eq = key.find('=');
      if (eq != std::string::npos) {
        node->key_defaults[key.substr(0, eq)] = key.substr(eq + 1);
        key.resize(eq);
      }
      node->keys.push_back(key);
    }
    if (node->keys.empty()) return bad();
  } else if (directive == "set") {
    node->list = FieldSchema::ListType::kSet;
  } else if (directive == "atomic") {
    node->list = FieldSchema::ListType::kAtomic;
    node->shape = FieldSchema::Shape::kAtomic;
  } else if (directive == "map") {
    node->shape = FieldSchema::Shape::kMap;
  } else {
    return bad();
  }
  return Status::Ok();
}

}  // namespace

Result<TypeSchema> CompileFieldRules(const FieldRules& rules) {
  TypeSchema out;
  for (const auto& line : rules.rules) RETURN_IF_ERROR(CompileRule(line, out.root));
  out.zero = Json::parse(rules.zero, nullptr, /*allow_exceptions=*/false);
  if (!out.zero.is_object()) {
    return Status(Code::kInvalid, "bad zero object: " + rules.zero);
  }
  return out;
}

const TypeSchema& SchemaOf(const ResourceType& type) {
  // Built once for the whole table (thread-safe static initialisation); a bad rule line is a
  // programming error caught by the api tests, and leaves that type with the defaults.
  static const auto* kAll = [] {
    auto* all = new std::unordered_map<std::string, TypeSchema>();
    for (const auto& r : AllResources()) {
      FieldRules rules = r.field_rules ? r.field_rules() : FieldRules{ObjectMetaRules()};
      auto compiled = CompileFieldRules(rules);
      all->emplace(r.PluralGroup(), compiled.ok() ? std::move(compiled).value() : TypeSchema{});
    }
    return all;
  }();
  static const TypeSchema kNone = CompileFieldRules({ObjectMetaRules()}).value();
  auto it = kAll->find(type.PluralGroup());
  return it == kAll->end() ? kNone : it->second;
}

}  // namespace pjemu::api
