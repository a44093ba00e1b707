// JSON manifests (files whose first byte is '{', as kubectl sniffs them). Internal to
// pjemu_manifest: nlohmann parses the values strictly; yaml-cpp reads the same text (JSON is
// YAML) only to learn the line of each field and to reject duplicate keys with their line.
// Thread safety: pure function.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "emulator/common/status.h"
#include "emulator/manifest/yaml_to_json.h"

namespace pjemu::manifest {

// One JSON value; errors read "job.json:3: invalid JSON: syntax error while parsing ...".
// Numbers are normalized as they are on their way through kubectl (NormalizeIntegralFloats).
Result<Json> ParseJsonDocument(std::string_view text, std::string_view source,
                               const ConvertLimits& limits, std::map<std::string, int>* lines);

// Turns integral float values (3.0) into integers and integers above int64 into floats,
// recursively, as kubectl's unstructured decoding does.
void NormalizeIntegralFloats(Json& value);

}  // namespace pjemu::manifest
