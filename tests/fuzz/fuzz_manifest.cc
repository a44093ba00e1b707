// Fuzz target: the manifest loader (YAML and JSON, as `pjemu apply/run/validate` read files).
// Invariants: no crash or escaping exception; every loaded object carries string apiVersion
// and kind; every recorded field line is inside the text; field paths round-trip.
#include <algorithm>

#include "emulator/manifest/manifest.h"
#include "tests/fuzz/fuzz_targets.h"

namespace pjemu::fuzz {

int FuzzManifest(const std::uint8_t* data, std::size_t size) {
  std::string_view text = AsText(data, size);
  auto loaded = manifest::LoadManifestText(text, "fuzz.yaml");
  if (!loaded.ok()) {
    FUZZ_CHECK(!loaded.status().message().empty());
    return 0;
  }
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const auto& m : *loaded) {
    FUZZ_CHECK(m.object.is_object());
    FUZZ_CHECK(m.object.contains("apiVersion") && m.object["apiVersion"].is_string());
    FUZZ_CHECK(m.object.contains("kind") && m.object["kind"].is_string());
    FUZZ_CHECK(m.line >= 1 && m.line <= lines);
    for (const auto& [pointer, line] : m.field_lines) {
      FUZZ_CHECK(line >= 1 && line <= lines);
      std::string path = manifest::PointerToFieldPath(pointer);
      FUZZ_CHECK(m.LineOf(path) >= 1);
    }
    (void)m.object.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return 0;
}

}  // namespace pjemu::fuzz
