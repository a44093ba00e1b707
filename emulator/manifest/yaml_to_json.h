// YAML node tree (yaml-cpp) -> nlohmann JSON, the way sigs.k8s.io/yaml turns a manifest into the
// JSON that kubectl sends. Internal to pjemu_manifest: manifest.cc calls it once per document.
// Records the line of every field (keyed by JSON pointer) and enforces the hostile-input limits
// (nesting depth, alias expansion, duplicate keys). Thread safety: one converter per thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::manifest {

struct ConvertLimits {
  int max_depth = 64;                          // nested mappings/sequences per document
  size_t max_nodes = 1'000'000;                // JSON values produced, counting alias copies
  size_t max_scalar_bytes = 32 * 1024 * 1024;  // scalar bytes produced, counting alias copies
};

// Why a conversion failed; JSON input ignores yaml-only failures (kYaml) but not the others.
enum class ConvertFailure { kNone, kYaml, kDuplicateKey, kTooDeep, kTooLarge };

class YamlToJson {
 public:
  // `source` prefixes errors ("job.yaml"); `lines` (may be null) receives pointer -> 1-based line.
  YamlToJson(std::string_view source, ConvertLimits limits, std::map<std::string, int>* lines);

  // Converts one document root. Errors read "job.yaml:7: duplicate key \"replicas\"".
  Result<Json> Convert(const YAML::Node& root);
  ConvertFailure failure() const { return failure_; }

 private:
  Status Node(const YAML::Node& node, int depth, int line, std::string& pointer, Json* out);
  Status Mapping(const YAML::Node& node, int depth, int line, std::string& pointer, Json* out);
  Status Merge(const YAML::Node& value, int depth, int line, Json* out);
  Status Sequence(const YAML::Node& node, int depth, int line, std::string& pointer, Json* out);
  Status Scalar(const YAML::Node& node, int line, Json* out);
  Result<std::string> Key(const YAML::Node& key, int line);
  Status Fail(ConvertFailure why, int line, const std::string& message);
  void Record(const std::string& pointer, int line);

  std::string source_;
  ConvertLimits limits_;
  std::map<std::string, int>* lines_;
  size_t nodes_ = 0;
  size_t scalar_bytes_ = 0;
  ConvertFailure failure_ = ConvertFailure::kNone;
};

// 1-based line of a yaml-cpp node, or `fallback` when the node carries no mark.
int LineOfNode(const YAML::Node& node, int fallback);

// Appends "/<key>" to a JSON pointer, escaping "~" and "/" (RFC 6901).
void AppendPointerToken(std::string& pointer, std::string_view token);

}  // namespace pjemu::manifest
