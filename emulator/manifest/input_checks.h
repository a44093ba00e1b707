// Byte-level checks that run before any YAML/JSON parser sees a manifest: size, UTF-8, control
// characters (go-yaml rejects them), and a readable message for yaml-cpp's tab errors; and the
// located error every loader stage returns. Internal to pjemu_manifest (manifest.cc).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::manifest {

// OK, or "job.yaml:3: invalid UTF-8 (byte 0xff)" / "job.yaml:3: control characters are not
// allowed (byte 0x00)". Control characters are checked only when `yaml` is true.
Status CheckEncoding(std::string_view text, std::string_view source, bool yaml);

// True when the text is JSON by kubectl's rule: the first non-whitespace byte is '{'.
bool LooksLikeJson(std::string_view text);

// True when the text has no document content at all (only whitespace, comments and markers).
bool IsBlank(std::string_view text);

// kBadRequest "<source>:<line>: <message>", with details {"file", "line", "message"} so that
// LoadErrorOf (check.h) can give the place back without reading the text.
Status LocatedError(std::string_view source, int line, std::string message);

// 1-based line of a byte offset.
int LineAt(std::string_view text, size_t offset);

// When a line among [line-1, line] (1-based) is indented with a tab, that line; else 0.
int TabIndentedLineNear(std::string_view text, int line);

}  // namespace pjemu::manifest
