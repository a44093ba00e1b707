#include "emulator/manifest/yaml_documents.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>

namespace pjemu::manifest {
namespace {

// Records only where each document starts.
class DocumentStarts final : public YAML::EventHandler {
 public:
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

std::vector<YAML::Node> LoadAllDocuments(const std::string& text) {
  // A first pass over the events only (linear, no tree): every document must start past the
  // previous one's start. LoadAll's builder is not public in yaml-cpp 0.7, so the trees come
  // from LoadAll itself once the stream is known to end.
  std::istringstream in(text);
  YAML::Parser parser(in);
  std::optional<YAML::Mark> previous;
  DocumentStarts events;
  while (parser.HandleNextDocument(events)) {
    if (previous && events.start.pos <= previous->pos) throw StalledDocument(events.start);
    previous = events.start;
  }
  return YAML::LoadAll(text);
}

}  // namespace pjemu::manifest
