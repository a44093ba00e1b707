// The console's static files (emulator/ui/static/), embedded into the binary at build time by
// embed_assets.cmake, which generates the definition of Assets() from the files.
// Thread safety: immutable data.
#pragma once

#include <string_view>
#include <vector>

namespace pjemu::ui {

struct Asset {
  std::string_view path;          // "index.html", relative to static/
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view data;
};

const std::vector<Asset>& Assets();
// The asset at `path`, or nullptr.
const Asset* FindAsset(std::string_view path);

}  // namespace pjemu::ui
