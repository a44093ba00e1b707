#include "emulator/api/persistent_volumes.h"

#include <algorithm>

#include "emulator/api/json_fields.h"

namespace pjemu::api {

std::vector<std::string> VolumeNodes(const Json& volume) {
  std::vector<std::string> nodes;
  const Json& terms = FieldAt(volume, {"spec", "nodeAffinity", "required", "nodeSelectorTerms"});
  for (const Json& term : ArrayOr(terms)) {
    for (const Json& e : ArrayOr(Field(term, "matchExpressions"))) {
      if (Str(e, "key") != kHostnameLabel || Str(e, "operator") != "In") continue;
      for (const Json& v : ArrayOr(Field(e, "values"))) {
        if (v.is_string()) nodes.push_back(v.get<std::string>());
      }
    }
  }
  return nodes;
}

bool VolumeAdmitsNode(const Json& volume, const std::string& node) {
  auto nodes = VolumeNodes(volume);
  return nodes.empty() || std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

bool IsDefaultStorageClass(const Json& storage_class) {
  const Json& annotations = FieldAt(storage_class, {"metadata", "annotations"});
  return Str(annotations, kDefaultClassAnnotation) == "true" ||
         Str(annotations, kBetaDefaultClassAnnotation) == "true";
}

const Json* FindDefaultStorageClass(const std::vector<const Json*>& classes) {
  const Json* best = nullptr;
  for (const Json* sc : classes) {
    if (!sc || !IsDefaultStorageClass(*sc)) continue;
    if (!best) {
      best = sc;
      continue;
    }
    const Json& meta = Field(*sc, "metadata");
    const Json& best_meta = Field(*best, "metadata");
    const std::string created = Str(meta, "creationTimestamp");
    const std::string best_created = Str(best_meta, "creationTimestamp");
    if (created > best_created ||
        (created == best_created && Str(meta, "name") < Str(best_meta, "name"))) {
      best = sc;
    }
  }
  return best;
}

std::string VolumeHostPath(const Json& volume) {
  const Json& spec = Field(volume, "spec");
  std::string path = Str(Field(spec, "local"), "path");
  if (path.empty()) path = Str(Field(spec, "hostPath"), "path");
  return path;
}

}  // namespace pjemu::api
