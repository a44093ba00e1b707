// The members of an image archive found by name, private to emulator/image (LoadArchive,
// archive.cc, reads manifests, configs and layers through it): an OCI layout given as a
// directory, or a tar (docker save, podman save, oci-archive, a tar of an OCI layout) indexed
// in one libarchive pass with small members kept in memory, the layers asked for streamed to
// files under the store's tmp/ in one more pass. Symlinks inside a tar are resolved by name,
// never on disk; member names are clamped at the archive's root.
// Thread safety: a Source belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/image/store.h"

namespace pjemu::image::archive_detail {

// kInvalid with `message`: how the loader words a bad archive.
inline Status Invalid(const std::string& message) { return Status(Code::kInvalid, message); }

class Source {
 public:
  virtual ~Source() = default;
  // The member `name` resolves to (symlinks inside the archive followed by name), "" if none.
  virtual std::string Resolve(const std::string& name) = 0;
  virtual Result<std::string> Read(const std::string& resolved, std::int64_t max_bytes) = 0;
  // Makes the members' bytes available as files (one pass over a tar).
  virtual Status Prepare(const std::vector<std::string>& resolved) = 0;
  // A file holding the member (after Prepare); *temporary when the caller should remove it.
  virtual Result<std::string> FileFor(const std::string& resolved, bool* temporary) = 0;
};

// The files under root (an OCI layout directory).
std::unique_ptr<Source> DirectorySource(const std::string& root);
// The tar at path, indexed (kInvalid `unrecognized image format` when it is no tar); the
// members it extracts go under store's tmp/ and are removed with it, but those FileFor hands
// over.
Result<std::unique_ptr<Source>> IndexTar(const std::string& path, const ImageStore& store);

}  // namespace pjemu::image::archive_detail
