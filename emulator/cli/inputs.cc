#include "emulator/cli/inputs.h"

#include <iostream>
#include <iterator>

#include "emulator/controller/validation.h"

namespace pjemu::cli {

Result<std::vector<manifest::Manifest>> LoadInputs(const std::vector<std::string>& files) {
  std::vector<manifest::Manifest> out;
  if (files.empty()) return Status(Code::kBadRequest, "no manifest given: use -f FILE");
  for (const std::string& file : files) {
    Result<std::vector<manifest::Manifest>> loaded = Status();
    if (file == "-") {
      std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
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
  ASSIGN_OR_RETURN(const api::ResourceType* type, TypeOf(m));
  if (!(*type == api::PyTorchJobs())) return Status::Ok();
  std::vector<std::string> warnings;
  Status s = controller::ValidatePyTorchJob(m.object, nullptr, &warnings);
  for (const std::string& w : warnings) std::cerr << "Warning: " << w << "\n";
  if (s.ok()) return s;
  // Point at the first cause's field; the message is the API server's.
  std::string field;
  if (s.details().is_object() && s.details().contains("causes") &&
      s.details()["causes"].is_array() && !s.details()["causes"].empty()) {
    field = s.details()["causes"][0].value("field", "");
  }
  int line = field.empty() ? m.line : m.LineOf(field);
  return Status(s.code(), m.source + ":" + std::to_string(line) + ": " + s.message(), s.details());
}

}  // namespace pjemu::cli
