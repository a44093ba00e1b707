#include "emulator/manifest/manifest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "emulator/manifest/input_checks.h"
#include "emulator/manifest/json_document.h"
#include "emulator/manifest/yaml_documents.h"
#include "emulator/manifest/yaml_to_json.h"

namespace pjemu::manifest {
namespace {

// One parsed document before List expansion and apiVersion/kind checks.
struct Document {
  Json object;
  int line = 1;
  std::map<std::string, int> lines;
};

ConvertLimits Limits() {
  ConvertLimits limits;
  limits.max_depth = kMaxNestingDepth;
  limits.max_nodes = kMaxExpandedValues;
  return limits;
}

// yaml-cpp's "yaml-cpp: error at line 2, column 3: illegal map value" -> "illegal map value".
std::string YamlMessage(const YAML::Exception& e) {
  return e.msg.empty() ? std::string(e.what()) : e.msg;
}

Result<std::vector<Document>> ParseYaml(std::string_view text, const std::string& source) {
  std::vector<YAML::Node> roots;
  try {
    // Not YAML::LoadAll: it can loop forever on a "," (see yaml_documents.h).
    roots = LoadAllDocuments(std::string(text));
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's own guard (2000 levels), "bad file"
    return LocatedError(source, e.mark.is_null() ? 1 : e.mark.line + 1,
                        fmt::format("nesting is deeper than {} levels", kMaxNestingDepth));
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    if (int tab = TabIndentedLineNear(text, line); tab > 0) {
      return LocatedError(
          source, tab,
          "found a tab character where indentation is expected (YAML forbids tabs there)");
    }
    return LocatedError(source, line, "yaml: " + YamlMessage(e));
  } catch (const std::exception& e) {
    return BadRequestError(fmt::format("{}: yaml: {}", source, e.what()));
  }
  std::vector<Document> docs;
  for (const YAML::Node& root : roots) {
    Document doc;
    doc.line = LineOfNode(root, 1);
    try {
      YamlToJson converter(source, Limits(), &doc.lines);
      ASSIGN_OR_RETURN(doc.object, converter.Convert(root));
    } catch (const std::exception& e) {  // yaml-cpp throws from node accessors on bad trees
      return LocatedError(source, doc.line, std::string("yaml: ") + e.what());
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

Result<std::vector<Document>> ParseJson(std::string_view text, const std::string& source) {
  Document doc;
  ASSIGN_OR_RETURN(doc.object, ParseJsonDocument(text, source, Limits(), &doc.lines));
  doc.line = LineAt(text, text.find('{'));
  std::vector<Document> docs;
  docs.push_back(std::move(doc));
  return docs;
}

const char* TypeName(const Json& j) {
  if (j.is_array()) return "a sequence";
  if (j.is_string()) return "a string";
  if (j.is_number()) return "a number";
  if (j.is_boolean()) return "a boolean";
  if (j.is_object()) return "a mapping";
  return "a value";
}

// The field lines of items[index], re-rooted at the item.
std::map<std::string, int> SubLines(const std::map<std::string, int>& lines, size_t index) {
  std::string prefix = "/items/" + std::to_string(index);
  std::map<std::string, int> out;
  for (auto it = lines.lower_bound(prefix + "/"); it != lines.end(); ++it) {
    if (it->first.compare(0, prefix.size() + 1, prefix + "/") != 0) break;
    out.emplace(it->first.substr(prefix.size()), it->second);
  }
  return out;
}

Status CheckTypeMeta(const Document& doc, const std::string& source) {
  std::vector<std::string> unset;
  for (const char* field : {"apiVersion", "kind"}) {
    auto it = doc.object.find(field);
    if (it == doc.object.end() || it->is_null() ||
        (it->is_string() && it->get_ref<const std::string&>().empty())) {
      unset.push_back(std::string(field) + " not set");
    } else if (!it->is_string()) {
      auto line = doc.lines.find(std::string("/") + field);
      return LocatedError(source, line == doc.lines.end() ? doc.line : line->second,
                          fmt::format("{}: expected a string, got {}", field, TypeName(*it)));
    }
  }
  if (unset.empty()) return Status::Ok();
  return LocatedError(source, doc.line, fmt::format("{}", fmt::join(unset, ", ")));
}

// Appends the objects of one document, flattening lists (kind "List", "PodList", ...) the way
// kubectl's resource builder does.
Status AddObjects(Document doc, const std::string& source, int depth, std::vector<Manifest>* out) {
  if (doc.object.is_null()) return Status::Ok();  // empty document
  if (!doc.object.is_object()) {
    return LocatedError(
        source, doc.line,
        fmt::format("expected a mapping (an object with apiVersion and kind), got {}",
                    TypeName(doc.object)));
  }
  RETURN_IF_ERROR(CheckTypeMeta(doc, source));
  const std::string& kind = doc.object["kind"].get_ref<const std::string&>();
  bool is_list = kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0;
  if (!is_list || depth > 4) {
    out->push_back(Manifest{std::move(doc.object), source, doc.line, std::move(doc.lines)});
    return Status::Ok();
  }
  auto items = doc.object.find("items");
  if (items == doc.object.end() || items->is_null()) return Status::Ok();
  if (!items->is_array()) {
    int line = doc.lines.count("/items") ? doc.lines["/items"] : doc.line;
    return LocatedError(source, line, "items: expected a sequence");
  }
  for (size_t i = 0; i < items->size(); ++i) {
    Document item;
    item.object = std::move((*items)[i]);
    std::string pointer = "/items/" + std::to_string(i);
    item.line = doc.lines.count(pointer) ? doc.lines[pointer] : doc.line;
    item.lines = SubLines(doc.lines, i);
    if (item.object.is_null()) {
      return LocatedError(source, item.line,
                          fmt::format("items[{}]: expected a mapping, got null", i));
    }
    RETURN_IF_ERROR(AddObjects(std::move(item), source, depth + 1, out));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Manifest>> LoadManifestText(std::string_view text,
                                               std::string_view source_name) {
  std::string source(source_name);
  if (text.size() > kMaxManifestBytes) {
    return Status(Code::kRequestEntityTooLarge,
                  fmt::format("{}: manifest is {} bytes, more than the limit of {} bytes", source,
                              text.size(), kMaxManifestBytes));
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  bool json = LooksLikeJson(text);
  RETURN_IF_ERROR(CheckEncoding(text, source, /*yaml=*/!json));
  ASSIGN_OR_RETURN(std::vector<Document> docs,
                   json ? ParseJson(text, source) : ParseYaml(text, source));
  std::vector<Manifest> out;
  for (Document& doc : docs) RETURN_IF_ERROR(AddObjects(std::move(doc), source, 0, &out));
  if (out.empty()) {
    return BadRequestError(
        fmt::format("{}: no objects found{}", source, IsBlank(text) ? " (the file is empty)" : ""));
  }
  return out;
}

Result<std::vector<Manifest>> LoadManifestFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return BadRequestError(fmt::format("{}: is a directory, not a manifest file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status(Code::kNotFound,
                  fmt::format("{}: cannot open: {}", path,
                              std::error_code(errno, std::generic_category()).message()));
  }
  std::string text(kMaxManifestBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return BadRequestError(fmt::format("{}: read error", path));
  if (text.size() > kMaxManifestBytes) {
    return Status(
        Code::kRequestEntityTooLarge,
        fmt::format("{}: manifest is more than the limit of {} bytes", path, kMaxManifestBytes));
  }
  return LoadManifestText(text, path);
}

}  // namespace pjemu::manifest
