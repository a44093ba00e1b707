// Server-side field validation (`fieldValidation=Strict|Warn|Ignore`):
// decodes a request body, finds duplicate keys and fields that the kind's schema does not
// have, and answers as the real server does: Strict -> 400 "strict decoding error: ...";
// Warn (the default) -> the fields are dropped and reported as warnings; Ignore -> dropped.
// Schema knowledge: a type's own known fields where its resource row has them
// (ResourceType::known_fields: the PyTorchJob's spec, replica specs, runPolicy, elasticPolicy,
// pod template metadata, PodSpec and Container), Pod (ObjectMeta, PodSpec, Container), the
// top-level fields of the other core kinds and StorageClass, and PodDisruptionBudget's spec.
// Deeper levels (probes, affinity, volumes' sources, status) are not checked: unknown fields
// there are kept.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "emulator/api/resources.h"
#include "emulator/common/status.h"

namespace pjemu::apiserver {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// "Strict", "Warn", "Ignore" or "" (Warn); anything else is kBadRequest.
Result<FieldValidation> ParseFieldValidation(const std::string& value);

// Go's encoding/json (and so kube-apiserver's decoder) refuses JSON nested deeper than this.
inline constexpr int kMaxJsonDepth = 10000;

// A byte scan, before any parser sees `body`: kBadRequest when its arrays and objects nest
// deeper than `max_depth` (parsing, copying and printing such a value recurses and would
// overflow the stack of an io thread; a 3 MiB body can nest 3 million levels).
Status CheckJsonDepth(std::string_view body, int max_depth = kMaxJsonDepth);

// Parses `body` as JSON (400 with the decoder's message when malformed), then applies the
// validation mode: on success returns the object with unknown fields removed and appends
// `unknown field "spec.foo"` / `duplicate field "x"` to *warnings (Warn only).
Result<Json> DecodeBody(const api::ResourceType& type, const std::string& body,
                        FieldValidation mode, std::vector<std::string>* warnings);

// The unknown-field paths of `object` for `type` ("spec.foo", "spec.containers[0].imagee").
std::vector<std::string> UnknownFields(const api::ResourceType& type, const Json& object);

}  // namespace pjemu::apiserver
