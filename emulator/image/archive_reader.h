// An owned libarchive reader: archive_read_new, freed with archive_read_free when it goes.
// Private to emulator/image (the unpacker and the archive loader).
// Thread safety: one reader per thread, as libarchive's are.
#pragma once

#include <archive.h>

#include <memory>

#include "emulator/common/status.h"

namespace pjemu::image {

struct ArchiveFree {
  void operator()(struct archive* a) const { archive_read_free(a); }
};
using ArchiveReader = std::unique_ptr<struct archive, ArchiveFree>;

// kInternal when libarchive cannot allocate one.
inline Result<ArchiveReader> NewArchiveReader() {
  ArchiveReader reader(archive_read_new());
  if (!reader) return Status(Code::kInternal, "libarchive: out of memory");
  return reader;
}

}  // namespace pjemu::image
