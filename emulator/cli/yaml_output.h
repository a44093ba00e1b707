// JSON to YAML the way `kubectl get -o yaml` prints objects (sigs.k8s.io/yaml over go-yaml v2):
// keys sorted, two-space indentation, sequence items at their parent key's indentation, and
// strings quoted when a plain scalar would read back as something else ("True", "1", "").
// Used by `get -o yaml` and `validate`. Thread safety: a pure function.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::cli {

std::string ToYaml(const Json& value);

}  // namespace pjemu::cli
