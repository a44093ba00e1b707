#include "emulator/image/image_service.h"

namespace pjemu::image {
namespace image_service_detail {

// The store behind the seam, and a registry client for what it lacks.
class StoreImageService : public ImageService {
 public:
  StoreImageService(std::shared_ptr<ImageStore> store, RegistryOptions options)
      : store_(store), registry_(std::move(store), std::move(options)) {}

  std::optional<ImageRecord> Present(const api::ImageReference& ref) override {
    if (std::optional<ImageRecord> found = store_->Find(ref.String())) return found;
    // A digest reference also finds the image pulled by a tag that named that digest.
    if (!ref.digest.empty()) return store_->Find(ref.WithDigest(ref.digest));
    return std::nullopt;
  }

  Result<ImageRecord> Pull(const api::ImageReference& ref, const Keyring& keyring,
                           PullStats* stats) override {
    return registry_.Pull(ref, keyring, stats);
  }

  Result<std::vector<std::string>> LayerDirs(const ImageRecord& image) override {
    ASSIGN_OR_RETURN(std::vector<std::string> dirs, store_->LayerDirs(image));
    store_->MarkUsed(image.id);
    return dirs;
  }

 private:
  std::shared_ptr<ImageStore> store_;
  RegistryClient registry_;
};

}  // namespace image_service_detail

std::unique_ptr<ImageService> MakeImageService(std::shared_ptr<ImageStore> store,
                                               RegistryOptions options) {
  return std::make_unique<image_service_detail::StoreImageService>(std::move(store),
                                                                   std::move(options));
}

}  // namespace pjemu::image
