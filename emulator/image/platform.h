// Platform: which manifest of an index runs on this node (os/architecture/variant in Go's
// GOOS/GOARCH words), and the selection containerd's platform matcher makes.
// Thread safety: plain values and pure functions.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::image {

struct Platform {
  std::string os = "linux";
  std::string architecture = "amd64";
  std::string variant;  // "" = any
  // The host's (uname's machine mapped to GOARCH: x86_64 -> amd64, aarch64 -> arm64 v8).
  static Platform Host();
  std::string String() const;  // "linux/amd64", "linux/arm64/v8"
};

// Picks the manifest descriptor of an OCI index / Docker manifest list (its JSON) for
// `platform`: the first whose platform matches (variant ignored when either side has none);
// entries of platform unknown/unknown (attestations) and unknown media types are skipped.
// kNotFound `no match for platform in manifest: not found` (containerd's text) otherwise.
Result<Json> SelectManifest(const Json& index, const Platform& platform);

}  // namespace pjemu::image
