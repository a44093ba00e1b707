// Test helpers for the image tests (shared with other tests of emulator/image): tars built in
// memory with libarchive's writer (pax format, optionally gzip or zstd), temp directories
// that remove themselves, and small file helpers.
// Thread safety: plain functions; TempDir is one object per test.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace pjemu::image::testing {

struct TarEntry {
  std::string path;
  char type = 'f';       // f(ile) d(ir) l(symlink) h(ardlink) p(fifo) c(har device) b(lock device)
  std::string content;   // a file's bytes
  std::string linkname;  // a symlink's or hard link's target
  int mode = -1;         // -1: 0644 for files, 0755 for dirs, 0777 for symlinks
  std::map<std::string, std::string> xattrs;
  long long mtime = 1700000000;
  int uid = 0, gid = 0;
};

enum class Compression { kNone, kGzip, kZstd };

inline TarEntry File(std::string path, std::string content, int mode = -1) {
  TarEntry e;
  e.path = std::move(path);
  e.content = std::move(content);
  e.mode = mode;
  return e;
}
inline TarEntry Dir(std::string path, int mode = -1) {
  TarEntry e;
  e.path = std::move(path);
  e.type = 'd';
  e.mode = mode;
  return e;
}
inline TarEntry Symlink(std::string path, std::string target) {
  TarEntry e;
  e.path = std::move(path);
  e.type = 'l';
  e.linkname = std::move(target);
  return e;
}
inline TarEntry Hardlink(std::string path, std::string target) {
  TarEntry e;
  e.path = std::move(path);
  e.type = 'h';
  e.linkname = std::move(target);
  return e;
}

// The tar's bytes (pax, as BuildKit and containerd write layers).
inline std::string BuildTar(const std::vector<TarEntry>& entries,
                            Compression compression = Compression::kNone) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (compression == Compression::kGzip) archive_write_add_filter_gzip(a);
  if (compression == Compression::kZstd) archive_write_add_filter_zstd(a);
  archive_write_set_bytes_per_block(a, 10240);
  archive_write_set_bytes_in_last_block(a, 1);  // no zero padding after a compressed stream
  std::string out;
  archive_write_open(
      a, &out, nullptr,
      [](struct archive*, void* opaque, const void* buffer, size_t length) -> la_ssize_t {
        static_cast<std::string*>(opaque)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  for (const TarEntry& e : entries) {
    struct archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_mtime(entry, e.mtime, 0);
    archive_entry_set_uid(entry, e.uid);
    archive_entry_set_gid(entry, e.gid);
    switch (e.type) {
      case 'd':
        archive_entry_set_filetype(entry, AE_IFDIR);
        archive_entry_set_perm(entry, e.mode < 0 ? 0755 : e.mode);
        break;
      case 'l':
        archive_entry_set_filetype(entry, AE_IFLNK);
        archive_entry_set_perm(entry, e.mode < 0 ? 0777 : e.mode);
        archive_entry_set_symlink(entry, e.linkname.c_str());
        break;
      case 'h':
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_perm(entry, e.mode < 0 ? 0644 : e.mode);
        archive_entry_set_hardlink(entry, e.linkname.c_str());
        archive_entry_set_size(entry, 0);
        break;
      case 'p':
        archive_entry_set_filetype(entry, AE_IFIFO);
        archive_entry_set_perm(entry, e.mode < 0 ? 0644 : e.mode);
        break;
      case 'c':
      case 'b':
        archive_entry_set_filetype(entry, e.type == 'c' ? AE_IFCHR : AE_IFBLK);
        archive_entry_set_perm(entry, e.mode < 0 ? 0644 : e.mode);
        archive_entry_set_rdevmajor(entry, 1);
        archive_entry_set_rdevminor(entry, 3);
        break;
      default:
        archive_entry_set_filetype(entry, AE_IFREG);
        archive_entry_set_perm(entry, e.mode < 0 ? 0644 : e.mode);
        archive_entry_set_size(entry, static_cast<la_int64_t>(e.content.size()));
    }
    for (const auto& [key, value] : e.xattrs) {
      archive_entry_xattr_add_entry(entry, key.c_str(), value.data(), value.size());
    }
    if (archive_write_header(a, entry) != ARCHIVE_OK) {
      std::string why = archive_error_string(a) != nullptr ? archive_error_string(a) : "?";
      archive_entry_free(entry);
      archive_write_free(a);
      throw std::runtime_error("BuildTar: " + why);
    }
    if (e.type == 'f' && !e.content.empty()) {
      archive_write_data(a, e.content.data(), e.content.size());
    }
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("WriteBytes " + path);
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// A fresh directory, removed with everything in it when the object goes (tests/support/temp_dir.h).
struct TempDir : pjemu::testing::TempDir {
  TempDir() : pjemu::testing::TempDir("pjemu-image-test") {}
};

}  // namespace pjemu::image::testing
