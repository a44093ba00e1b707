// yaml-cpp's LoadAll with a guard against its endless loop: yaml-cpp 0.7 leaves a ',' (flow
// entry) at the root of a document unconsumed, so LoadAll reads the same empty document again
// and again until memory runs out (a one-byte "," file). Internal to pjemu_manifest
// (manifest.cc). Thread safety: pure functions.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace pjemu::manifest {

// Thrown by LoadAllDocuments when a document does not advance past its start: go-yaml's
// "did not find expected node content" at that mark.
class StalledDocument : public YAML::ParserException {
 public:
  explicit StalledDocument(const YAML::Mark& mark)
      : YAML::ParserException(mark, "did not find expected node content") {}
};

// YAML::LoadAll(text), or throws StalledDocument (or yaml-cpp's own exceptions).
std::vector<YAML::Node> LoadAllDocuments(const std::string& text);

}  // namespace pjemu::manifest
