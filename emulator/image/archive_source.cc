// Sources of LoadArchive: a directory's files, or a tar indexed in one libarchive pass (small
// members kept in memory) whose layers are streamed to files under the store's tmp/ in one
// more pass.
#include "emulator/image/archive_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "emulator/image/archive_reader.h"
#include "emulator/image/fs_util.h"

namespace pjemu::image::archive_detail {

constexpr std::int64_t kSmallMember = 1 << 20;     // kept in memory by the index pass
constexpr std::int64_t kMemoryBudget = 128 << 20;  // all small members together

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

std::string JoinPath(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// A member name as a clean relative path, ".." clamped at the archive's root (the scope).
std::string CleanName(const std::string& name) {
  std::vector<std::string> out;
  for (const auto& part : SplitPath(name)) {
    if (part == "..") {
      if (!out.empty()) out.pop_back();
    } else {
      out.push_back(part);
    }
  }
  return JoinPath(out);
}

class DirSource : public Source {
 public:
  explicit DirSource(std::string root) : root_(std::move(root)) {}
  std::string Resolve(const std::string& name) override {
    std::string clean = CleanName(name);
    struct stat st {};
    if (clean.empty() || ::stat((root_ + "/" + clean).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return "";
    }
    return clean;
  }
  Result<std::string> Read(const std::string& resolved, std::int64_t max_bytes) override {
    return fsutil::ReadWholeFile(root_ + "/" + resolved, max_bytes);
  }
  Status Prepare(const std::vector<std::string>&) override { return Status::Ok(); }
  Result<std::string> FileFor(const std::string& resolved, bool* temporary) override {
    *temporary = false;
    return root_ + "/" + resolved;
  }

 private:
  std::string root_;
};

class TarSource : public Source {
 public:
  TarSource(std::string path, const ImageStore& store) : path_(std::move(path)), store_(store) {}
  ~TarSource() override {
    for (auto& [name, member] : members_) {
      if (!member.file.empty()) ::unlink(member.file.c_str());
    }
  }

  // The index pass. kInvalid `unrecognized image format` when it is no tar.
  Status Index() {
    std::int64_t ordinal = 0;
    std::int64_t memory = 0;
    return Pass([&](struct archive* a, struct archive_entry* entry) -> Status {
      Member member;
      member.ordinal = ordinal++;
      std::string name = CleanName(EntryName(entry));
      if (name.empty()) return Status::Ok();
      const char* hardlink = archive_entry_hardlink(entry);
      if (hardlink == nullptr) hardlink = archive_entry_hardlink_utf8(entry);
      if (hardlink != nullptr) {
        member.type = 'h';
        member.link = CleanName(hardlink);
      } else {
        switch (archive_entry_filetype(entry)) {
          case AE_IFREG:
            member.type = 'f';
            break;
          case AE_IFDIR:
            member.type = 'd';
            break;
          case AE_IFLNK: {
            member.type = 'l';
            const char* link = archive_entry_symlink(entry);
            if (link == nullptr) link = archive_entry_symlink_utf8(entry);
            member.link = link != nullptr ? link : "";
            break;
          }
          default:
            member.type = 'o';
        }
      }
      member.size = archive_entry_size(entry);
      if (member.type == 'f' && member.size <= kSmallMember &&
          memory + member.size <= kMemoryBudget) {
        ASSIGN_OR_RETURN(member.data, ReadData(a, kSmallMember));
        member.in_memory = true;
        memory += static_cast<std::int64_t>(member.data.size());
      }
      members_[name] = std::move(member);
      return Status::Ok();
    });
  }

  std::string Resolve(const std::string& name) override {
    std::vector<std::string> pending = SplitPath(name);
    std::vector<std::string> done;
    int hops = 0;
    while (!pending.empty()) {
      std::string part = pending.front();
      pending.erase(pending.begin());
      if (part == "..") {
        if (!done.empty()) done.pop_back();
        continue;
      }
      done.push_back(part);
      auto it = members_.find(JoinPath(done));
      if (it == members_.end()) continue;
      const Member& m = it->second;
      if (m.type == 'l' || (m.type == 'h' && pending.empty())) {
        if (++hops > 40) return "";
        std::vector<std::string> next = SplitPath(m.link);
        if (m.type == 'h' || (!m.link.empty() && m.link[0] == '/')) {
          done.clear();
        } else {
          done.pop_back();
        }
        next.insert(next.end(), pending.begin(), pending.end());
        pending = std::move(next);
      }
    }
    std::string resolved = JoinPath(done);
    auto it = members_.find(resolved);
    return it != members_.end() && it->second.type == 'f' ? resolved : "";
  }

  Result<std::string> Read(const std::string& resolved, std::int64_t max_bytes) override {
    auto it = members_.find(resolved);
    if (it == members_.end()) return Status(Code::kNotFound, resolved + ": not in the archive");
    if (it->second.in_memory) return it->second.data;
    if (it->second.size > max_bytes) return Invalid(resolved + ": too large");
    RETURN_IF_ERROR(Prepare({resolved}));
    return fsutil::ReadWholeFile(it->second.file, max_bytes);
  }

  Status Prepare(const std::vector<std::string>& resolved) override {
    std::map<std::int64_t, Member*> wanted;
    for (const auto& name : resolved) {
      auto it = members_.find(name);
      if (it == members_.end()) return Status(Code::kNotFound, name + ": not in the archive");
      Member& m = it->second;
      if (!m.file.empty()) continue;
      m.file = store_.TempPath("load-member");
      if (m.in_memory) {
        RETURN_IF_ERROR(fsutil::WriteFileAtomic(store_.root() + "/tmp", m.file, m.data));
        continue;
      }
      wanted[m.ordinal] = &m;
    }
    if (wanted.empty()) return Status::Ok();
    std::int64_t ordinal = 0;
    return Pass([&](struct archive* a, struct archive_entry*) -> Status {
      auto it = wanted.find(ordinal++);
      if (it == wanted.end()) return Status::Ok();
      return CopyData(a, it->second->file);
    });
  }

  Result<std::string> FileFor(const std::string& resolved, bool* temporary) override {
    *temporary = true;
    auto it = members_.find(resolved);
    if (it == members_.end()) return Status(Code::kNotFound, resolved + ": not in the archive");
    if (it->second.file.empty()) RETURN_IF_ERROR(Prepare({resolved}));
    std::string file = it->second.file;
    it->second.file.clear();  // the caller owns it now
    return file;
  }

 private:
  struct Member {
    char type = 'o';  // f(ile), d(ir), l(symlink), h(ardlink), o(ther)
    std::string link;
    std::int64_t size = 0;
    std::int64_t ordinal = 0;
    bool in_memory = false;
    std::string data;
    std::string file;  // extracted to, under the store's tmp/
  };

  static std::string EntryName(struct archive_entry* entry) {
    const char* name = archive_entry_pathname(entry);
    if (name == nullptr) name = archive_entry_pathname_utf8(entry);
    return name != nullptr ? name : "";
  }

  Status ArchiveError(struct archive* a) const {
    const char* why = archive_error_string(a);
    return Invalid("invalid archive " + path_ + ": " + (why != nullptr ? why : "read error"));
  }

  Result<std::string> ReadData(struct archive* a, std::int64_t max_bytes) const {
    std::string out;
    char buffer[65536];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buffer, sizeof buffer);
      if (n < 0) return ArchiveError(a);
      if (n == 0) return out;
      if (static_cast<std::int64_t>(out.size()) + n > max_bytes) return Invalid("member too large");
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }

  Status CopyData(struct archive* a, const std::string& file) const {
    fsutil::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd.valid()) return fsutil::ErrnoStatus("create", file, errno);
    char buffer[256 * 1024];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buffer, sizeof buffer);
      if (n < 0) return ArchiveError(a);
      if (n == 0) return Status::Ok();
      const char* p = buffer;
      std::size_t left = static_cast<std::size_t>(n);
      while (left > 0) {
        ssize_t w = ::write(fd.get(), p, left);
        if (w < 0) {
          if (errno == EINTR) continue;
          return fsutil::ErrnoStatus("write", file, errno);
        }
        p += w;
        left -= static_cast<std::size_t>(w);
      }
    }
  }

  template <typename Visit>
  Status Pass(Visit visit) const {
    ASSIGN_OR_RETURN(ArchiveReader reader, NewArchiveReader());
    struct archive* a = reader.get();
    archive_read_support_format_tar(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_zstd(a);
    archive_read_support_filter_bzip2(a);
    archive_read_support_filter_xz(a);
    if (archive_read_open_filename(a, path_.c_str(), 256 * 1024) != ARCHIVE_OK) {
      return Invalid("unrecognized image format");
    }
    bool first = true;
    for (;;) {
      struct archive_entry* entry = nullptr;
      int rc = archive_read_next_header(a, &entry);
      if (rc == ARCHIVE_EOF) return Status::Ok();
      if (rc < ARCHIVE_WARN) {
        if (first) return Invalid("unrecognized image format");
        return ArchiveError(a);
      }
      first = false;
      RETURN_IF_ERROR(visit(a, entry));
    }
  }

  std::string path_;
  const ImageStore& store_;
  std::map<std::string, Member> members_;
};

std::unique_ptr<Source> DirectorySource(const std::string& root) {
  return std::make_unique<DirSource>(root);
}

Result<std::unique_ptr<Source>> IndexTar(const std::string& path, const ImageStore& store) {
  auto source = std::make_unique<TarSource>(path, store);
  RETURN_IF_ERROR(source->Index());
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace pjemu::image::archive_detail
