// The console's create form: checks pasted or uploaded YAML the way `pjemu validate` does,
// without creating anything, and gives every error its line so the page can mark it.
// Thread safety: a pure function of its argument.
#pragma once

#include <string_view>

#include "emulator/common/status.h"

namespace pjemu::ui {

// {"documents": [{"object", "line", "lines": {JSON pointer: line}, "errors": [{"line",
// "field", "message"}], "warnings": [...]}], "errors": [{"line", "message"}]}: top-level errors
// are syntax errors (no documents then); a document's errors are the admission webhook's field
// errors for a PyTorchJob, or an unknown apiVersion/kind.
Json CheckManifest(std::string_view text);

}  // namespace pjemu::ui
