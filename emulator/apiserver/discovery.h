// API discovery: the classic documents (/api, /apis, /api/v1, /apis/<group>[/<version>]) that
// kubectl 1.20 reads, and the aggregated APIGroupDiscoveryList (v2 and v2beta1) that kubectl
// 1.27+ asks for first. All built from api::AllResources().
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "emulator/apiserver/http_types.h"

namespace pjemu::apiserver {

// The discovery answer for `path` (decoded, no trailing slash) given the request's Accept
// header; nullopt when `path` is not a discovery path.
// `metrics`: the server also serves metrics.k8s.io/v1beta1 (metrics_api.h), which /apis lists
// as an aggregated API server's group is listed (its own documents are the metrics mount's).
std::optional<HttpResponse> ServeDiscovery(const std::string& path, const std::string& accept,
                                           bool metrics = false);

}  // namespace pjemu::apiserver
