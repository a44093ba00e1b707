#include "emulator/ui/manifest_check.h"

#include <cstdlib>

#include "emulator/api/resources.h"
#include "emulator/controller/validation.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::ui {
namespace {

constexpr std::string_view kSource = "job.yaml";

// "job.yaml:12: message" -> {12, "message"}; line 0 when the message names none.
Json SyntaxError(const std::string& message) {
  std::string prefix = std::string(kSource) + ":";
  int line = 0;
  std::string text = message;
  if (message.rfind(prefix, 0) == 0) {
    char* end = nullptr;
    long n = std::strtol(message.c_str() + prefix.size(), &end, 10);
    if (end && *end == ':') {
      line = static_cast<int>(n);
      text = std::string(end + 1);
      if (!text.empty() && text[0] == ' ') text.erase(0, 1);
    }
  }
  return {{"line", line}, {"message", text}};
}

}  // namespace

Json CheckManifest(std::string_view text) {
  Json out = {{"documents", Json::array()}, {"errors", Json::array()}};
  auto loaded = manifest::LoadManifestText(text, kSource);
  if (!loaded.ok()) {
    out["errors"].push_back(SyntaxError(loaded.status().message()));
    return out;
  }
  for (const manifest::Manifest& m : *loaded) {
    Json doc = {{"object", m.object},
                {"line", m.line},
                {"lines", Json::object()},
                {"errors", Json::array()},
                {"warnings", Json::array()}};
    for (const auto& [pointer, line] : m.field_lines) doc["lines"][pointer] = line;
    std::string api_version = m.object.value("apiVersion", "");
    std::string kind = m.object.value("kind", "");
    if (api::FindByKind(api_version, kind) == nullptr) {
      doc["errors"].push_back(
          {{"line", m.LineOf("kind")},
           {"field", "kind"},
           {"message", "no matches for kind \"" + kind + "\" in version \"" + api_version + "\""}});
    } else if (&*api::FindByKind(api_version, kind) == &api::PyTorchJobs()) {
      std::vector<std::string> warnings;
      for (const auto& e : controller::WebhookFieldErrors(m.object, nullptr, &warnings)) {
        doc["errors"].push_back(
            {{"line", m.LineOf(e.field)}, {"field", e.field}, {"message", e.ToString()}});
      }
      for (auto& w : warnings) doc["warnings"].push_back(w);
    }
    out["documents"].push_back(std::move(doc));
  }
  return out;
}

}  // namespace pjemu::ui
