// ImagePuller: the kubelet's image pull step, the seam between "what to run for an image" (the
// ImageMap) and "when its container may be created". Before creating a container the kubelet
// asks PullTime; while that time passes the pod waits in ContainerCreating (events Pulling,
// then Pulled), and then the kubelet reports Pulled. The default, ImageCache, takes the image
// map's pull_delay for an image this node has not pulled yet and nothing once it has. Decorators
// (a slow registry in emulator/faults) wrap it through KubeletOptions::image_puller.
// Thread safety: the kubelet's EventLoop thread only.
#pragma once

#include <set>
#include <string>

#include "emulator/common/clock.h"
#include "emulator/kubelet/image_map.h"

namespace pjemu::kubelet {

class ImagePuller {
 public:
  virtual ~ImagePuller() = default;
  // How long pulling `image` (the reference as the pod writes it; plan.normalized is its
  // normalized form, plan.pull_delay the image map's delay) takes from now; Duration(0) = the
  // image is present, create the container at once.
  virtual Duration PullTime(const std::string& image, const ImagePlan& plan) = 0;
  // A pull that PullTime asked for has finished (`normalized` is plan.normalized).
  virtual void Pulled(const std::string& normalized) = 0;
};

// The node's image store: an image the node has pulled stays present.
class ImageCache final : public ImagePuller {
 public:
  Duration PullTime(const std::string&, const ImagePlan& plan) override {
    return pulled_.count(plan.normalized) ? Duration(0) : plan.pull_delay;
  }
  void Pulled(const std::string& normalized) override { pulled_.insert(normalized); }

 private:
  std::set<std::string> pulled_;  // normalized references
};

}  // namespace pjemu::kubelet
