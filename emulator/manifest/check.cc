#include "emulator/manifest/check.h"

#include "emulator/api/object_validation.h"
#include "emulator/api/pod_validation.h"
#include "emulator/api/workload.h"

namespace pjemu::manifest {
namespace {

// The causes of a refusal (details.causes[{field, message}]) with their lines.
std::vector<ManifestError> CauseErrors(const Manifest& m, const Status& refusal) {
  std::vector<ManifestError> out;
  const Json& details = refusal.details();
  if (!details.is_object() || !details.contains("causes") || !details["causes"].is_array()) {
    return out;
  }
  for (const Json& cause : details["causes"]) {
    std::string field = cause.value("field", "");
    std::string message = field + ": " + cause.value("message", "");
    out.push_back({m.source, m.LineOf(field), std::move(field), std::move(message)});
  }
  return out;
}

}  // namespace

ManifestError LoadErrorOf(const Status& load_error) {
  const Json& d = load_error.details();
  if (d.is_object() && d.contains("line") && d["line"].is_number_integer()) {
    return {d.value("file", ""), d["line"].get<int>(), "", d.value("message", "")};
  }
  return {"", 0, "", load_error.message()};
}

DocumentCheck CheckDocument(const Manifest& m) {
  DocumentCheck check;
  const std::string api_version = m.object.value("apiVersion", "");
  const std::string kind = m.object.value("kind", "");
  check.type = api::FindByKind(api_version, kind);
  if (check.type == nullptr) {
    check.errors.push_back(
        {m.source, m.LineOf("kind"), "kind",
         "no matches for kind \"" + kind + "\" in version \"" + api_version + "\""});
    return check;
  }
  const api::Admission& admission = check.type->admission;
  Json object = m.object;
  if (admission.defaulter) admission.defaulter(object);
  if (admission.validator) {
    check.admission = admission.validator(object, nullptr, &check.warnings);
    check.errors = CauseErrors(m, check.admission);
  }
  // The operator's webhook does not look into pod templates; the API server refuses each pod
  // made from a bad one later (FailedCreatePod). Checked here so `run` stops before starting.
  if (check.admission.ok() && check.type->workload) {
    check.admission =
        api::InvalidObject(*check.type, object, api::TemplateVolumeErrors(*check.type, object));
    check.errors = CauseErrors(m, check.admission);
  }
  return check;
}

}  // namespace pjemu::manifest
