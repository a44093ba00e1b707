// LoadArchive: `pjemu image load -i FILE`, as `kind load image-archive` and `docker load` take
// images: a `docker save` archive (Docker <= 24: manifest.json with <id>/layer.tar; Docker >= 25:
// an OCI layout plus manifest.json), a `podman save` archive (docker-archive, whose layer.tar
// entries are symlinks to <hex>.tar, or oci-archive), or an OCI image layout given as a
// directory or a tar of one. The outer tar is read with libarchive; members are found by name
// (symlinks inside the archive resolved by name, never on disk), each layer is handed to
// ImageStore::AddLayer (gzip/zstd/plain sniffed), each config verified against its digest and
// each layer's DiffID against the config's rootfs.diff_ids.
// Names: RepoTags (familiar or fully qualified) normalized; in an OCI layout,
// io.containerd.image.name, else org.opencontainers.image.ref.name when it is a full
// reference; an image with no name is stored by ID only. Indexes are resolved to `platform`
// (attestation manifests skipped).
// Errors, as docker load words them (kInvalid): `unrecognized image format` (neither
// manifest.json nor oci-layout), `invalid archive: does not contain a manifest.json`,
// `invalid manifest, layers length mismatch: expected N, got M`, `invalid diffID for layer N:
// expected "X", got "Y"`, `unsupported OCI version X`, `missing index.json in OCI layout`, a
// hostile layer's error (layer_unpack.h); kNotFound when the file does not exist.
// Thread safety: as ImageStore.
#pragma once

#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/image/platform.h"
#include "emulator/image/store.h"

namespace pjemu::image {

struct LoadedImage {
  std::string id;
  std::vector<std::string> names;
};

Result<std::vector<LoadedImage>> LoadArchive(ImageStore& store, const std::string& path,
                                             const Platform& platform = Platform::Host());

}  // namespace pjemu::image
