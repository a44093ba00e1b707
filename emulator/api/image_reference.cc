#include "emulator/api/image_reference.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "emulator/common/memo.h"

namespace pjemu::api {
namespace {

// distribution/reference's grammar (reference.go, regexp.go).
const std::string kAlnum = "[a-z0-9]+";
const std::string kSeparator = "(?:[._]|__|[-]+)";
const std::string kPathComponent = kAlnum + "(?:" + kSeparator + kAlnum + ")*";
const std::string kDomainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const std::string kDomain =
    "(?:" + kDomainComponent + "(?:\\." + kDomainComponent + ")*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?";
const std::string kTag = "[\\w][\\w.-]{0,127}";
const std::string kDigest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

const std::regex& ReferenceRegex() {
  static const std::regex re("^((" + kDomain + ")/)?(" + kPathComponent + "(?:/" +
                             kPathComponent + ")*)(?::(" + kTag + "))?(?:@(" + kDigest + "))?$");
  return re;
}

bool HasUpper(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isupper(c); });
}

// splitDockerDomain: the first component is a registry host only if it looks like one.
std::pair<std::string, std::string> SplitDomain(const std::string& name) {
  std::string domain = "docker.io", remainder = name;
  std::size_t slash = name.find('/');
  if (slash != std::string::npos) {
    std::string first = name.substr(0, slash);
    if (first.find_first_of(".:") != std::string::npos || first == "localhost" ||
        HasUpper(first)) {
      domain = first;
      remainder = name.substr(slash + 1);
    }
  }
  if (domain == "index.docker.io") domain = "docker.io";
  if (domain == "docker.io" && remainder.find('/') == std::string::npos) {
    remainder = "library/" + remainder;
  }
  return {domain, remainder};
}

Status Invalid(const std::string& why) { return Status(Code::kInvalid, why); }

// ParseImageReference, computed.
Result<ImageReference> ParseUncached(const std::string& text) {
  static const std::regex hex64("^[a-f0-9]{64}$");
  if (text.empty()) return Invalid("invalid reference format");
  if (std::regex_match(text, hex64)) {
    return Invalid("invalid repository name (" + text +
                   "), cannot specify 64-byte hexadecimal strings");
  }
  auto [domain, remainder] = SplitDomain(text);
  std::string remote = remainder.substr(0, remainder.find_first_of(":@"));
  if (HasUpper(remote)) {
    return Invalid("invalid reference format: repository name (" + remote +
                   ") must be lowercase");
  }
  std::smatch m;
  const std::string full = domain + "/" + remainder;
  if (!std::regex_match(full, m, ReferenceRegex()) || !m[1].matched) {
    return Invalid("invalid reference format");
  }
  ImageReference ref;
  ref.domain = m[2].str();
  ref.path = m[3].str();
  if (ref.Name().size() > 255) return Invalid("repository name must not be more than 255 characters");
  ref.tag = m[4].str();
  ref.digest = m[5].str();
  if (!ref.digest.empty()) {
    ref.tag.clear();  // ParseDockerRef: with both, the digest wins and the tag is dropped
  } else if (ref.tag.empty()) {
    ref.tag = "latest";
  }
  return ref;
}

}  // namespace

std::string ImageReference::Name() const { return domain + "/" + path; }

std::string ImageReference::String() const {
  return digest.empty() ? Name() + ":" + tag : Name() + "@" + digest;
}

std::string ImageReference::WithDigest(const std::string& d) const { return Name() + "@" + d; }

std::string ImageReference::RegistryHost() const {
  return domain == "docker.io" ? "registry-1.docker.io" : domain;
}

Result<ImageReference> ParseImageReference(const std::string& text) {
  // The kubelet parses every container's image at each start: the same few names, by regex.
  thread_local Memo<Result<ImageReference>> memo;
  return memo.Get(text, [&] { return ParseUncached(text); });
}

std::string InvalidImageNameMessage(const std::string& image, const std::string& why) {
  return "Failed to apply default image tag \"" + image + "\": couldn't parse image reference \"" +
         image + "\": " + why;
}

std::string DefaultImagePullPolicy(const std::string& image) {
  auto ref = ParseImageReference(image);
  if (!ref.ok()) return "IfNotPresent";
  return ref->digest.empty() && ref->tag == "latest" ? "Always" : "IfNotPresent";
}

}  // namespace pjemu::api
