// Request bodies in Kubernetes' protobuf encoding (Content-Type
// application/vnd.kubernetes.protobuf): what kubectl 1.33's typed clients send for `kubectl create
// configmap|secret|namespace|job`. The envelope (magic "k8s\0" + runtime.Unknown) is unwrapped
// and the object converted to its JSON wire form for the types described here (ConfigMap,
// Secret, Namespace, the subset of a batch/v1 Job that `kubectl create job` fills, with their
// ObjectMeta); the rest of the server only ever sees JSON. Responses stay JSON (kubectl accepts
// both). Thread safety: pure functions.
#pragma once

#include <string_view>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {

// True when the body starts with the protobuf envelope's magic.
bool IsProtobufBody(std::string_view body);
// The object as JSON; kUnsupportedMediaType for a type with no description here, kBadRequest
// for a body that does not parse.
Result<Json> ProtobufBodyToJson(const api::ResourceType& type, std::string_view body);

}  // namespace pjemu::apiserver
