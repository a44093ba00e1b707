// Image references as Kubernetes and the OCI/Docker tooling read them: the grammar
// `name[:tag][@digest]`, the familiar-name normalization (busybox -> docker.io/library/busybox,
// index.docker.io -> docker.io), and the kubelet's defaults that follow from it (the implied
// `latest` tag, imagePullPolicy Always for `latest`, IfNotPresent otherwise).
// Thread safety: pure functions over plain values.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

struct ImageReference {
  std::string domain;  // "docker.io", "127.0.0.1:5000", "localhost:5000", "nvcr.io"
  std::string path;    // "library/busybox", "kubeflow/pytorch-dist-sendrecv-test"
  std::string tag;     // "latest" when neither a tag nor a digest is given; "" with a digest only
  std::string digest;  // "sha256:<64 hex>" or ""

  // domain/path: "docker.io/library/busybox".
  std::string Name() const;
  // The normalized reference: name@digest when there is a digest (the digest wins over a
  // tag), else name:tag. "docker.io/library/busybox:latest".
  std::string String() const;
  // name@<digest>: what containerd reports as a repo digest (imageID).
  std::string WithDigest(const std::string& digest) const;
  // The registry host to contact: docker.io is served by registry-1.docker.io.
  std::string RegistryHost() const;
};

// Parses `text` as the kubelet and containerd do. kInvalid with the reference library's texts:
// "invalid reference format", "invalid reference format: repository name (x) must be
// lowercase", "invalid repository name (x), cannot specify 64-byte hexadecimal strings".
Result<ImageReference> ParseImageReference(const std::string& text);

// The kubelet's message for a reference that does not parse (InvalidImageName):
// `Failed to apply default image tag "<x>": couldn't parse image reference "<x>": <why>`.
std::string InvalidImageNameMessage(const std::string& image, const std::string& why);

// imagePullPolicy's default for a container image (pkg/apis/core/v1/defaults.go): "Always" when
// the tag is `latest` (written or implied, and no digest), else "IfNotPresent". An unparsable
// image gets "IfNotPresent" (the kubelet refuses it later as InvalidImageName).
std::string DefaultImagePullPolicy(const std::string& image);

}  // namespace pjemu::api
