// UnpackLayer: formats, digests, overlay whiteouts, and hostile layers (nothing written
// outside the destination, which is removed again on failure).
#include "emulator/image/layer_unpack.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>

#include "emulator/image/digest.h"
#include "tests/image/tar_builder.h"

namespace pjemu::image {
namespace {

using testing::Compression;
using testing::Dir;
using testing::File;
using testing::Hardlink;
using testing::Symlink;
using testing::TarEntry;
using testing::TempDir;

std::string Gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(compressBound(bytes.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Unpacked {
  Result<UnpackedLayer> result;
  std::string dest;
};

Unpacked Unpack(const TempDir& tmp, const std::string& blob, const LayerExpect& expect = {},
                const UnpackLimits& limits = {}) {
  static int counter = 0;
  std::string file = tmp / ("blob" + std::to_string(++counter));
  testing::WriteBytes(file, blob);
  std::string dest = tmp / ("layer" + std::to_string(counter));
  return Unpacked{UnpackLayer(file, dest, expect, limits), dest};
}

std::vector<TarEntry> SampleEntries() {
  return {Dir("etc"), File("etc/hostname", "node\n"), File("bin/tool", "#!/bin/sh\n", 04755),
          Symlink("bin/sh", "/bin/busybox"), Hardlink("bin/tool2", "bin/tool")};
}

TEST_CASE("UnpackLayer applies a plain, gzip and zstd layer and reports its digests",
          "[image][unpack]") {
  TempDir tmp;
  std::string tar = testing::BuildTar(SampleEntries());
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZstd}) {
    std::string blob = c == Compression::kNone ? tar : testing::BuildTar(SampleEntries(), c);
    INFO("compression " << static_cast<int>(c));
    if (c == Compression::kGzip) CHECK(static_cast<unsigned char>(blob[0]) == 0x1f);
    LayerExpect expect;
    expect.blob_digest = Sha256Of(blob);
    expect.blob_size = static_cast<std::int64_t>(blob.size());
    expect.diff_id = Sha256Of(tar);
    Unpacked u = Unpack(tmp, blob, expect);
    REQUIRE(u.result.ok());
    CHECK(u.result->diff_id == Sha256Of(tar));
    CHECK(u.result->blob_digest == Sha256Of(blob));
    CHECK(u.result->blob_size == static_cast<std::int64_t>(blob.size()));
    CHECK(u.result->entries == 5);
    CHECK(testing::ReadBytes(u.dest + "/etc/hostname") == "node\n");
    struct stat st {};
    REQUIRE(::lstat((u.dest + "/bin/tool").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 04755);  // setuid kept
    CHECK(st.st_nlink == 2);
    CHECK(st.st_mtime == 1700000000);
    REQUIRE(::lstat((u.dest + "/bin/sh").c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    char link[64] = {};
    CHECK(::readlink((u.dest + "/bin/sh").c_str(), link, sizeof link - 1) > 0);
    CHECK(std::string(link) == "/bin/busybox");
    REQUIRE(::lstat((u.dest + "/etc").c_str(), &st) == 0);
    CHECK(st.st_mtime == 1700000000);  // directories' mtimes after their children
  }
}

TEST_CASE("UnpackLayer checks the blob digest, size and DiffID", "[image][unpack]") {
  TempDir tmp;
  std::string tar = testing::BuildTar({File("a", "1")});
  std::string gz = testing::BuildTar({File("a", "1")}, Compression::kGzip);
  LayerExpect expect;
  expect.diff_id = Sha256Of("something else");
  Unpacked u = Unpack(tmp, gz, expect);
  REQUIRE_FALSE(u.result.ok());
  CHECK(u.result.status().code() == Code::kInvalid);
  CHECK_THAT(
      u.result.status().message(),
      Catch::Contains("digest mismatch: expected " + expect.diff_id + ", got " + Sha256Of(tar)));
  CHECK_FALSE(testing::PathExists(u.dest));

  LayerExpect blob;
  blob.blob_digest = Sha256Of(tar);  // the DiffID, not the gzip blob's digest
  u = Unpack(tmp, gz, blob);
  REQUIRE_FALSE(u.result.ok());
  CHECK_THAT(u.result.status().message(), Catch::Contains("digest mismatch: expected " +
                                                          Sha256Of(tar) + ", got " + Sha256Of(gz)));
  CHECK_FALSE(testing::PathExists(u.dest));

  LayerExpect size;
  size.blob_size = 3;
  u = Unpack(tmp, gz, size);
  REQUIRE_FALSE(u.result.ok());
  CHECK_THAT(u.result.status().message(), Catch::Contains("size mismatch"));
}

TEST_CASE("UnpackLayer writes overlay whiteouts and opaque directories", "[image][unpack]") {
  REQUIRE(::geteuid() == 0);  // mknod and trusted.* xattrs
  TempDir tmp;
  std::string tar =
      testing::BuildTar({Dir("etc"), File("etc/.wh.passwd", ""), File("var/cache/keep", "x"),
                         File("var/cache/.wh..wh..opq", ""), File("opt/.wh..wh..opq", "")});
  Unpacked u = Unpack(tmp, tar);
  REQUIRE(u.result.ok());
  struct stat st {};
  REQUIRE(::lstat((u.dest + "/etc/passwd").c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  CHECK(st.st_rdev == makedev(0, 0));
  CHECK_FALSE(testing::PathExists(u.dest + "/etc/.wh.passwd"));
  for (const char* dir : {"/var/cache", "/opt"}) {
    char value[8] = {};
    INFO(dir);
    CHECK(::lgetxattr((u.dest + dir).c_str(), "trusted.overlay.opaque", value, sizeof value) == 1);
    CHECK(value[0] == 'y');
  }
  CHECK(testing::PathExists(u.dest + "/var/cache/keep"));  // same layer: not hidden
  CHECK_FALSE(testing::PathExists(u.dest + "/var/cache/.wh..wh..opq"));
}

// Each hostile layer is refused with kInvalid naming the entry, leaves no dest behind and
// writes nothing outside it.
struct Hostile {
  const char* what;
  std::vector<TarEntry> entries;
  const char* message;
};

TEST_CASE("UnpackLayer refuses hostile layers without writing outside dest",
          "[image][unpack][hostile]") {
  TempDir tmp;
  std::string outside = tmp / "outside";
  ::mkdir(outside.c_str(), 0755);
  TarEntry overlay_xattr = File("f", "x");
  overlay_xattr.xattrs["trusted.overlay.redirect"] = "/etc";
  TarEntry user_overlay = Dir("d");
  user_overlay.xattrs["user.overlay.opaque"] = "y";
  TarEntry device;
  device.path = "dev/mem";
  device.type = 'c';
  TarEntry block;
  block.path = "dev/sda";
  block.type = 'b';
  std::vector<Hostile> cases = {
      {"absolute path", {File(outside + "/abs", "x")}, "absolute path"},
      {"dot dot", {File("../outside/dotdot", "x")}, "path leaves the layer"},
      {"nested dot dot", {Dir("a"), File("a/../../outside/dotdot2", "x")}, "path leaves the layer"},
      {"symlink then write", {Symlink("a", outside), File("a/x", "pwned")}, "parent is a symlink"},
      {"relative symlink then write",
       {Symlink("b", "../outside"), File("b/y", "pwned")},
       "parent is a symlink"},
      {"symlink then directory", {Symlink("c", outside), Dir("c/sub")}, "parent is a symlink"},
      {"hard link outside", {Hardlink("h", "../outside/target")}, "outside the layer"},
      {"absolute hard link", {Hardlink("h", outside + "/target")}, "outside the layer"},
      {"hard link through symlink",
       {Symlink("s", outside), Hardlink("h", "s/target")},
       "is not in the layer"},
      {"hard link to nothing", {Hardlink("h", "missing")}, "is not in the layer"},
      {"char device", {device}, "device files are not allowed"},
      {"block device", {block}, "device files are not allowed"},
      {"bare whiteout", {File("etc/.wh.", "")}, "invalid whiteout name"},
      {"dot dot whiteout", {File("etc/.wh...", "")}, "invalid whiteout name"},
      {"trusted overlay xattr", {overlay_xattr}, "xattr trusted.overlay.redirect"},
      {"user overlay xattr", {user_overlay}, "xattr user.overlay.opaque"},
  };
  testing::WriteBytes(outside + "/target", "secret");
  for (const Hostile& c : cases) {
    INFO(c.what);
    Unpacked u = Unpack(tmp, testing::BuildTar(c.entries));
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
    CHECK_THAT(u.result.status().message(), Catch::Contains(c.message));
    CHECK_THAT(u.result.status().message(), Catch::Contains("entry \""));
    CHECK_FALSE(testing::PathExists(u.dest));
    // Nothing new appeared outside.
    int count = 0;
    for (const auto& e : std::filesystem::directory_iterator(outside)) {
      (void)e;
      ++count;
    }
    CHECK(count == 1);
    CHECK(testing::ReadBytes(outside + "/target") == "secret");
  }
  CHECK_FALSE(testing::PathExists(tmp / "dotdot"));
}

TEST_CASE("UnpackLayer refuses corrupt streams and bombs", "[image][unpack][hostile]") {
  TempDir tmp;
  std::vector<TarEntry> entries;
  for (int i = 0; i < 20; ++i)
    entries.push_back(File("f" + std::to_string(i), std::string(4000, 'a' + i)));
  std::string gz = testing::BuildTar(entries, Compression::kGzip);
  std::string zst = testing::BuildTar(entries, Compression::kZstd);
  std::string tar = testing::BuildTar(entries);

  SECTION("truncated gzip") {
    Unpacked u = Unpack(tmp, gz.substr(0, gz.size() / 2));
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
    CHECK_THAT(u.result.status().message(), Catch::Contains("gzip"));
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("corrupt gzip") {
    std::string bad = gz;
    for (std::size_t i = 20; i < 60 && i < bad.size(); ++i) bad[i] = static_cast<char>(~bad[i]);
    Unpacked u = Unpack(tmp, bad);
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("truncated zstd") {
    Unpacked u = Unpack(tmp, zst.substr(0, zst.size() - 10));
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("truncated tar") {
    Unpacked u = Unpack(tmp, tar.substr(0, 3000));
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("not a tar") {
    Unpacked u = Unpack(tmp, std::string(2048, 'x'));
    REQUIRE_FALSE(u.result.ok());
    CHECK(u.result.status().code() == Code::kInvalid);
  }
  SECTION("too many entries") {
    UnpackLimits limits;
    limits.max_entries = 10;
    Unpacked u = Unpack(tmp, gz, {}, limits);
    REQUIRE_FALSE(u.result.ok());
    CHECK_THAT(u.result.status().message(), Catch::Contains("more than 10 entries"));
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("too many bytes") {
    UnpackLimits limits;
    limits.max_bytes = 20000;
    Unpacked u = Unpack(tmp, zst, {}, limits);
    REQUIRE_FALSE(u.result.ok());
    CHECK_THAT(u.result.status().message(), Catch::Contains("larger than 20000 bytes"));
    CHECK_FALSE(testing::PathExists(u.dest));
  }
  SECTION("path too long") {
    UnpackLimits limits;
    limits.max_path = 50;
    Unpacked u = Unpack(tmp, testing::BuildTar({File(std::string(60, 'p'), "x")}), {}, limits);
    REQUIRE_FALSE(u.result.ok());
    CHECK_THAT(u.result.status().message(), Catch::Contains("path longer than 50"));
  }
  SECTION("concatenated gzip members and an empty layer") {
    // pigz and `cat a.gz b.gz` write several members: one stream.
    std::string two = Gzip(tar.substr(0, 5000)) + Gzip(tar.substr(5000));
    Unpacked u = Unpack(tmp, two);
    REQUIRE(u.result.ok());
    CHECK(u.result->entries == 20);
    CHECK(u.result->diff_id == Sha256Of(tar));
    CHECK(u.result->blob_digest == Sha256Of(two));
    Unpacked empty = Unpack(tmp, std::string(1024, '\0'));
    REQUIRE(empty.result.ok());
    CHECK(empty.result->entries == 0);
    CHECK(empty.result->diff_id == Sha256Of(std::string(1024, '\0')));
  }
}

TEST_CASE("UnpackLayer replaces entries as a layer changeset does", "[image][unpack]") {
  TempDir tmp;
  std::string tar =
      testing::BuildTar({File("x", "first"), File("x", "second"), Dir("d"), File("d/in", "1"),
                         Dir("d", 0700), File("d", "now a file"), Symlink("l", "x"),
                         File("l", "replaced link"), Dir("ro", 0555), File("ro/inside", "ok")});
  Unpacked u = Unpack(tmp, tar);
  REQUIRE(u.result.ok());
  CHECK(testing::ReadBytes(u.dest + "/x") == "second");
  CHECK(testing::ReadBytes(u.dest + "/d") == "now a file");
  struct stat st {};
  REQUIRE(::lstat((u.dest + "/l").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  REQUIRE(::lstat((u.dest + "/ro").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0555);
  CHECK(testing::ReadBytes(u.dest + "/ro/inside") == "ok");
}

TEST_CASE("Digests are checked and computed", "[image][digest]") {
  CHECK(CheckDigest("sha256:" + std::string(64, 'a')).ok());
  CHECK(CheckDigest("sha256:" + std::string(63, 'a')).code() == Code::kInvalid);
  CHECK(CheckDigest("sha256:" + std::string(64, 'A')).code() == Code::kInvalid);
  CHECK_THAT(CheckDigest("sha512:abc").message(), Catch::Contains("sha512"));
  CHECK(Sha256Of("") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 hash;
  hash.Update("ab", 2);
  hash.Update("c", 1);
  CHECK(hash.Final() == Sha256Of("abc"));
  CHECK(DigestHex("sha256:abcd") == "abcd");
}

}  // namespace
}  // namespace pjemu::image
