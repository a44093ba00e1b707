// Checks manifests the way the API server would admit them on create, without a cluster: the
// apiVersion/kind must be a served type, and the object must pass that type's admission from the
// resource table (for a PyTorchJob, the operator's webhook). Every problem comes back with its
// file, line and field. `pjemu validate`, `pjemu run` and the console's create form all check
// through here.
// Thread safety: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::manifest {

// One problem in a manifest and where it is.
struct ManifestError {
  std::string file;     // Manifest::source (the file name, or LoadManifestText's source_name)
  int line = 0;         // 1-based; 0 when the error names no line (file is then "" too)
  std::string field;    // "kind", "spec.pytorchReplicaSpecs[Master].replicas"; "" for load errors
  std::string message;  // the text after "<file>:<line>: " (the whole text when there is no line)
};

// A loader error (LoadManifestText, LoadManifestFile) as a ManifestError.
ManifestError LoadErrorOf(const Status& load_error);

struct DocumentCheck {
  const api::ResourceType* type = nullptr;  // nullptr when the apiVersion/kind is not served
  // The unknown kind (field "kind"), or each cause of the admission's refusal in its order, with
  // message "<field>: <cause>" ("spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must
  // be 1").
  std::vector<ManifestError> errors;
  std::vector<std::string> warnings;  // the admission's warnings
  // The admission's answer as the API server gives it (OK, or e.g. the webhook's 403 with
  // details.causes); OK for an unknown kind, which `errors` reports.
  Status admission;
};

// Checks one loaded object as a create would admit it (no stored object to compare with). For a
// job kind's object that admission accepts, its pod templates' volumes and volumeMounts are
// checked too (api::Workload::template_errors), as a 422 on the job naming the template field.
DocumentCheck CheckDocument(const Manifest& m);

}  // namespace pjemu::manifest
