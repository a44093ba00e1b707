#include "emulator/cli/inputs.h"

#include <iostream>
#include <iterator>

#include "emulator/manifest/check.h"

namespace pjemu::cli {

Result<std::vector<manifest::Manifest>> LoadInputs(const std::vector<std::string>& files) {
  std::vector<manifest::Manifest> out;
  if (files.empty()) return Status(Code::kBadRequest, "no manifest given: use -f FILE");
  for (const std::string& file : files) {
    Result<std::vector<manifest::Manifest>> loaded = Status();
    if (file == "-") {
      std::string text((std::istreambuf_iterator<char>(std::cin)),
                       std::istreambuf_iterator<char>());
      loaded = manifest::LoadManifestText(text, "<stdin>");
    } else {
      loaded = manifest::LoadManifestFile(file);
    }
    if (!loaded.ok()) return loaded.status();
    for (auto& m : *loaded) out.push_back(std::move(m));
  }
  return out;
}

Result<const api::ResourceType*> TypeOf(const manifest::Manifest& m) {
  std::string api_version = m.object.value("apiVersion", "");
  std::string kind = m.object.value("kind", "");
  const api::ResourceType* type = api::FindByKind(api_version, kind);
  if (type == nullptr) {
    return Status(Code::kBadRequest, m.source + ":" + std::to_string(m.line) +
                                         ": no matches for kind \"" + kind + "\" in version \"" +
                                         api_version + "\"");
  }
  return type;
}

Status CheckManifest(const manifest::Manifest& m) {
  RETURN_IF_ERROR(TypeOf(m).status());
  manifest::DocumentCheck check = manifest::CheckDocument(m);
  for (const std::string& w : check.warnings) std::cerr << "Warning: " << w << "\n";
  const Status& s = check.admission;
  if (s.ok()) return s;
  // Point at the first cause's line; the message is the API server's.
  int line = check.errors.empty() ? m.line : check.errors.front().line;
  return Status(s.code(), m.source + ":" + std::to_string(line) + ": " + s.message(), s.details());
}

}  // namespace pjemu::cli
