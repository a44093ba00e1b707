// Platform matching as containerd's default matcher does it for a Linux node.
#include "emulator/image/platform.h"

#include "emulator/image/media_types.h"

#include <sys/utsname.h>

namespace pjemu::image {

namespace platform_detail {

std::string StringField(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// containerd normalizes arm64's variant "v8" to "" (any) and arm's "" to "v7".
std::string NormalVariant(const std::string& architecture, const std::string& variant) {
  if (architecture == "arm64" && variant == "v8") return "";
  return variant;
}

bool KnownManifestType(const std::string& media_type) {
  return media_types::IsManifestOrIndex(media_type);
}

}  // namespace platform_detail

Platform Platform::Host() {
  Platform p;
  struct utsname name {};
  if (uname(&name) == 0) {
    std::string machine = name.machine;
    if (machine == "x86_64" || machine == "amd64") {
      p.architecture = "amd64";
    } else if (machine == "aarch64" || machine == "arm64") {
      p.architecture = "arm64";
      p.variant = "v8";
    } else if (machine == "i386" || machine == "i686") {
      p.architecture = "386";
    } else if (machine == "armv7l") {
      p.architecture = "arm";
      p.variant = "v7";
    } else if (machine == "ppc64le" || machine == "s390x" || machine == "riscv64") {
      p.architecture = machine;
    } else {
      p.architecture = machine;
    }
  }
  return p;
}

std::string Platform::String() const {
  std::string out = os + "/" + architecture;
  if (!variant.empty()) out += "/" + variant;
  return out;
}

Result<Json> SelectManifest(const Json& index, const Platform& platform) {
  using namespace platform_detail;
  Status not_found(Code::kNotFound, "no match for platform in manifest: not found");
  if (!index.is_object()) return not_found;
  auto manifests = index.find("manifests");
  if (manifests == index.end() || !manifests->is_array()) return not_found;
  std::string want_variant = NormalVariant(platform.architecture, platform.variant);
  for (const Json& entry : *manifests) {
    if (!entry.is_object()) continue;
    if (!KnownManifestType(StringField(entry, "mediaType"))) continue;
    auto p = entry.find("platform");
    if (p == entry.end() || !p->is_object()) continue;
    std::string os = StringField(*p, "os");
    std::string architecture = StringField(*p, "architecture");
    if (os == "unknown" || architecture == "unknown") continue;  // attestations
    if (os != platform.os || architecture != platform.architecture) continue;
    std::string variant = NormalVariant(architecture, StringField(*p, "variant"));
    if (!variant.empty() && !want_variant.empty() && variant != want_variant) continue;
    return entry;
  }
  return not_found;
}

}  // namespace pjemu::image
