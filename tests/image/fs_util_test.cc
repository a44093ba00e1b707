// fsutil::MakeDirs: mkdir -p, with an error naming the path that stops it.
#include "emulator/image/fs_util.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace pjemu::image::fsutil {
namespace {

bool IsDir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TEST_CASE("MakeDirs makes a directory and its missing parents, and accepts one that exists") {
  pjemu::testing::TempDir dir("pjemu-fsutil-test");
  const std::string deep = dir / "a/b/c";
  REQUIRE(MakeDirs(deep).ok());
  CHECK(IsDir(dir / "a"));
  CHECK(IsDir(dir / "a/b"));
  CHECK(IsDir(deep));
  CHECK(MakeDirs(deep).ok());           // present already
  CHECK(MakeDirs(dir / "a/b/d").ok());  // its parent present
  CHECK(IsDir(dir / "a/b/d"));
  CHECK(MakeDirs(dir / "e/f//").ok());  // trailing and doubled slashes
  CHECK(IsDir(dir / "e/f"));
  CHECK(MakeDirs("").ok());
}

TEST_CASE("MakeDirs fails on a file in the way, naming the path") {
  pjemu::testing::TempDir dir("pjemu-fsutil-test");
  std::ofstream(dir / "file") << "x";
  Status at_file = MakeDirs(dir / "file");
  CHECK_FALSE(at_file.ok());
  CHECK_THAT(at_file.message(),
             Catch::Contains(dir / "file") && Catch::Contains("not a directory"));
  Status below_file = MakeDirs(dir / "file/sub/dir");
  CHECK_FALSE(below_file.ok());
  CHECK_THAT(below_file.message(), Catch::Contains(dir / "file/sub"));
  CHECK_FALSE(IsDir(dir / "file/sub"));
}

}  // namespace
}  // namespace pjemu::image::fsutil
