// The OCI and Docker media types the image code reads (image-spec media-types.md, containerd's
// core/images/mediatypes.go). Private to emulator/image: the archive loader, the registry
// client and the platform matcher.
// Thread safety: constants and pure functions.
#pragma once

#include <string>

namespace pjemu::image::media_types {

inline constexpr char kOciIndex[] = "application/vnd.oci.image.index.v1+json";
inline constexpr char kOciManifest[] = "application/vnd.oci.image.manifest.v1+json";
inline constexpr char kOciConfig[] = "application/vnd.oci.image.config.v1+json";
inline constexpr char kDockerList[] = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr char kDockerManifest[] = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr char kDockerConfig[] = "application/vnd.docker.container.image.v1+json";
inline constexpr char kSchema1Signed[] =
    "application/vnd.docker.distribution.manifest.v1+prettyjws";
inline constexpr char kSchema1Json[] = "application/vnd.docker.distribution.manifest.v1+json";

// Docker's schema 1 manifests, which containerd (and pjemu) no longer take.
inline bool IsSchema1(const std::string& t) { return t == kSchema1Signed || t == kSchema1Json; }
// A manifest or an index of either family ("" = unknown, as an index entry may omit it).
inline bool IsManifestOrIndex(const std::string& t) {
  return t.empty() || t == kOciManifest || t == kDockerManifest || t == kOciIndex ||
         t == kDockerList;
}

}  // namespace pjemu::image::media_types
