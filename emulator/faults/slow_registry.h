// SlowRegistry: a kubelet::ImagePuller decorator for the pull-delay fault (a slow or congested
// registry). SetDelay(glob, delay) makes every later pull of an image matching the glob (fnmatch,
// on the reference as the pod writes it or its normalized form) take `delay`, and forgets the
// matching images the node has already pulled, as if garbage-collected; the latest matching
// SetDelay wins. Images no glob matches are left to the wrapped puller. Sits between one
// kubelet and its image cache (the cluster makes one per kubelet: cluster::ClusterOptions::
// wrap_images).
// Thread safety: the kubelet's EventLoop thread only.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulator/kubelet/image_puller.h"

namespace pjemu::faults {

class SlowRegistry final : public kubelet::ImagePuller {
 public:
  // inner must outlive this decorator.
  explicit SlowRegistry(kubelet::ImagePuller& inner) : inner_(inner) {}

  Duration PullTime(const std::string& image, const kubelet::ImagePlan& plan) override;
  void Pulled(const std::string& normalized) override;

  // From now on pulls of images matching glob take delay (0 = immediate).
  void SetDelay(const std::string& glob, Duration delay);

 private:
  kubelet::ImagePuller& inner_;
  std::vector<std::pair<std::string, Duration>> delays_;  // glob -> delay, in the order set
  // Every image the node pulled (each Pulled passes through here), minus the forgotten ones.
  std::set<std::string> pulled_;
};

}  // namespace pjemu::faults
