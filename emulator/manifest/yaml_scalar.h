// Typing of YAML scalars the way kubectl reads manifests: sigs.k8s.io/yaml decodes YAML with
// go-yaml v2 (YAML 1.1 rules) and converts the result to JSON. Used by yaml_to_json.cc for every
// plain (unquoted) scalar and map key; quoted scalars are always strings and never come here.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::manifest {

// Resolves a plain scalar as go-yaml v2 does: y/Y/yes/Yes/YES/on/On/ON/true/True/TRUE (and the
// n/no/off/false forms) are booleans; ""/~/null/Null/NULL are null; integers after removing
// "_", with Go's base prefixes (0x, 0o, 0b, and a leading 0 for octal); then floats (1.5, .5,
// 1e3). A float with an integral value becomes an integer, because json.Marshal writes
// float64(3) as "3", which is what the API server receives from kubectl; an integer above int64
// becomes a float, as kubectl's unstructured decoding makes it. ".inf" and ".nan"
// are errors (JSON cannot carry them). Anything else stays a string.
Result<Json> ResolvePlainScalar(std::string_view text);

// The JSON object key for a plain scalar map key, as sigs.k8s.io/yaml builds it: strings stay,
// booleans become "true"/"false", numbers their decimal form. Null keys are an error.
Result<std::string> ResolvePlainKey(std::string_view text);

}  // namespace pjemu::manifest
