// Manifest input of the CLI (`run -f`, `validate -f`, `create/apply/delete -f`): loads every
// file ("-" = stdin) through emulator/manifest and checks each object before anything is sent
// or started: a kind pjemu serves, and for PyTorchJobs the operator's admission (webhook +
// CRD rule), reported as "<file>:<line>: <field>: <message>".
// Thread safety: free functions; used from the main thread.
#pragma once

#include <string>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"
#include "emulator/manifest/manifest.h"

namespace pjemu::cli {

// Every object of every file, in order. Errors carry "<file>:<line>: ".
Result<std::vector<manifest::Manifest>> LoadInputs(const std::vector<std::string>& files);
// The resource type of a manifest's apiVersion/kind; kBadRequest naming the file:line otherwise
// (kubectl's `no matches for kind "X" in version "Y"`).
Result<const api::ResourceType*> TypeOf(const manifest::Manifest& m);
// Admission checks for one object (manifest::CheckDocument: the type's admission, for
// PyTorchJobs the webhook): its warnings go to stderr; a refusal comes back as the API server's
// Status, its message prefixed with "<file>:<line>: " of the first offending field.
Status CheckManifest(const manifest::Manifest& m);

}  // namespace pjemu::cli
