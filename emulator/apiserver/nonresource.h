// The API server's non-resource endpoints: /version, /healthz /readyz /livez, and OpenAPI
// (/openapi/v2 as the minimal protobuf Document kubectl 1.20-1.28 require; /openapi/v3 with
// per-group-version documents that declare server-side fieldValidation, so kubectl 1.29+
// leaves validation to the server).
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "emulator/apiserver/http_types.h"

namespace pjemu::apiserver {

// The answer for `path` (decoded, no trailing slash; `raw_query` for the v3 hash), or nullopt
// when the path is not one of these endpoints. `git_version` is a full semver ("v1.30.0").
std::optional<HttpResponse> ServeNonResource(const std::string& path,
                                             const std::string& git_version);

// The protobuf openapi v2 Document {swagger:"2.0", info:{title:"Kubernetes", version}}.
std::string MinimalOpenApiV2(const std::string& git_version);

}  // namespace pjemu::apiserver
