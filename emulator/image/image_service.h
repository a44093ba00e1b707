// ImageService: the kubelet's image seam (the CRI's ImageService, in process): whether an
// image is present, pulling one, and the layer directories a container's root is made of.
// Decorators (emulator/faults) wrap it through cluster::ClusterOptions::wrap_image_service to
// inject registry faults (slow pulls, failures).
// Thread safety: every method may be called from any thread; Pull blocks (the kubelet calls
// it off its event loop).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator/api/image_reference.h"
#include "emulator/common/status.h"
#include "emulator/image/credentials.h"
#include "emulator/image/registry.h"
#include "emulator/image/store.h"

namespace pjemu::image {

class ImageService {
 public:
  virtual ~ImageService() = default;
  // The stored image `ref` names, if any (no network).
  virtual std::optional<ImageRecord> Present(const api::ImageReference& ref) = 0;
  // Pulls ref (registry.h's errors); stats may be null.
  virtual Result<ImageRecord> Pull(const api::ImageReference& ref, const Keyring& keyring,
                                   PullStats* stats) = 0;
  // The image's layer directories, top first (ImageStore::LayerDirs); marks it used.
  virtual Result<std::vector<std::string>> LayerDirs(const ImageRecord& image) = 0;
};

// The store and a registry client behind the seam.
std::unique_ptr<ImageService> MakeImageService(std::shared_ptr<ImageStore> store,
                                               RegistryOptions options);

}  // namespace pjemu::image
