#include "emulator/ui/manifest_check.h"

#include "emulator/manifest/check.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::ui {
namespace {

constexpr std::string_view kSource = "job.yaml";

Json Document(const manifest::Manifest& m) {
  Json doc = {{"object", m.object},
              {"line", m.line},
              {"lines", Json::object()},
              {"errors", Json::array()},
              {"warnings", Json::array()}};
  for (const auto& [pointer, line] : m.field_lines) doc["lines"][pointer] = line;
  manifest::DocumentCheck check = manifest::CheckDocument(m);
  for (const manifest::ManifestError& e : check.errors) {
    doc["errors"].push_back({{"line", e.line}, {"field", e.field}, {"message", e.message}});
  }
  for (auto& w : check.warnings) doc["warnings"].push_back(w);
  return doc;
}

}  // namespace

Json CheckManifest(std::string_view text) {
  Json out = {{"documents", Json::array()}, {"errors", Json::array()}};
  auto loaded = manifest::LoadManifestText(text, kSource);
  if (!loaded.ok()) {
    manifest::ManifestError e = manifest::LoadErrorOf(loaded.status());
    out["errors"].push_back({{"line", e.line}, {"message", e.message}});
    return out;
  }
  for (const manifest::Manifest& m : *loaded) out["documents"].push_back(Document(m));
  return out;
}

}  // namespace pjemu::ui
