// idx reading (gzip and plain, corrupt files) and the DistributedSampler order, checked against
// indices recorded from torch 1.13's DistributedSampler (python3-torch, see the comment below).
#include "trainer/fashion_mnist.h"

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

namespace fs = std::filesystem;

std::string IdxBytes(const std::vector<int>& dims, const std::vector<uint8_t>& data) {
  std::string b = {0, 0, 8, static_cast<char>(dims.size())};
  for (int d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<char>((d >> s) & 0xff));
  }
  b.append(data.begin(), data.end());
  return b;
}

void WritePlain(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void WriteGz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  gzclose(f);
}

TEST_CASE("idx files read the same plain and gzipped", "[trainer]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  const std::string bytes = IdxBytes({2, 3}, {1, 2, 3, 4, 5, 255});
  WritePlain(dir + "/a", bytes);
  WriteGz(dir + "/a.gz", bytes);
  for (const std::string name : {"/a", "/a.gz"}) {
    auto r = ReadIdx(dir + name);
    REQUIRE(r.ok());
    CHECK(r->dims == std::vector<int64_t>{2, 3});
    CHECK(r->data == std::vector<uint8_t>{1, 2, 3, 4, 5, 255});
  }
}

TEST_CASE("corrupt idx files are errors naming the file", "[trainer]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  const std::string good = IdxBytes({2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    std::string name, bytes, what;
  };
  std::vector<Case> cases = {
      {"magic", std::string("\x12\x34\x08\x02", 4) + good.substr(4), "magic"},
      {"type", std::string("\0\0\x0d\x02", 4) + good.substr(4), "ubyte"},
      {"short", good.substr(0, 2), "magic"},
      {"header", good.substr(0, 6), "header"},
      {"truncated", good.substr(0, good.size() - 1), "truncated data"},
      {"trailing", good + "x", "trailing"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    WritePlain(dir + "/" + c.name, c.bytes);
    auto r = ReadIdx(dir + "/" + c.name);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("corrupt idx file " + dir + "/" + c.name));
    CHECK_THAT(r.status().message(), Catch::Contains(c.what));
  }
  // A gzip stream cut in the middle.
  WriteGz(dir + "/cut.gz", IdxBytes({100, 100}, std::vector<uint8_t>(10000, 7)));
  fs::resize_file(dir + "/cut.gz", fs::file_size(dir + "/cut.gz") / 2);
  auto cut = ReadIdx(dir + "/cut.gz");
  REQUIRE_FALSE(cut.ok());
  CHECK_THAT(cut.status().message(), Catch::Contains("corrupt idx file"));

  auto missing = ReadIdx(dir + "/nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Code::kNotFound);
}

TEST_CASE("LoadSplit checks the folder and that images and labels agree", "[trainer]") {
  auto none = LoadSplit("/nonexistent/fashion", "train");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("data folder not found: /nonexistent"));

  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  WriteGz(dir + "/t10k-images-idx3-ubyte.gz",
          IdxBytes({2, 28, 28}, std::vector<uint8_t>(2 * 784, 51)));
  WritePlain(dir + "/t10k-labels-idx1-ubyte", IdxBytes({2}, {3, 9}));
  auto ok = LoadSplit(dir, "t10k");
  REQUIRE(ok.ok());
  CHECK(ok->size() == 2);
  CHECK(ok->labels[1].item<int64_t>() == 9);
  CHECK(ToFloat(ok->images)[1][0][5][5].item<float>() == 51.0f / 255.0f);

  WritePlain(dir + "/t10k-labels-idx1-ubyte", IdxBytes({3}, {3, 9, 1}));
  auto count = LoadSplit(dir, "t10k");
  REQUIRE_FALSE(count.ok());
  CHECK_THAT(count.status().message(), Catch::Contains("label count"));

  WritePlain(dir + "/t10k-labels-idx1-ubyte", IdxBytes({2}, {3, 10}));
  auto label = LoadSplit(dir, "t10k");
  REQUIRE_FALSE(label.ok());
  CHECK_THAT(label.status().message(), Catch::Contains("label 10"));
}

TEST_CASE("the Debian FashionMNIST files load", "[trainer]") {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz")) {
    WARN("dataset-fashion-mnist not installed; skipped");
    return;
  }
  auto test = LoadSplit("/usr/share/datasets/fashion-mnist", "t10k");
  REQUIRE(test.ok());
  CHECK(test->size() == 10000);
  CHECK(test->images.sizes() == torch::IntArrayRef({10000, 1, 28, 28}));
}

// Recorded with python3-torch 1.13.1:
//   list(DistributedSampler(range(n), num_replicas=ws, rank=r))
TEST_CASE("sampler order equals torch's DistributedSampler", "[trainer]") {
  auto r0 = DistributedSamplerIndices(60000, 2, 0);
  REQUIRE(r0.size() == 30000);
  CHECK(std::vector<int64_t>(r0.begin(), r0.begin() + 10) ==
        std::vector<int64_t>{36044, 57327, 21567, 9481, 26145, 36531, 58716, 29792, 4072, 3020});
  CHECK(std::vector<int64_t>(r0.end() - 3, r0.end()) == std::vector<int64_t>{3514, 6465, 27130});
  auto r1 = DistributedSamplerIndices(60000, 2, 1);
  CHECK(std::vector<int64_t>(r1.begin(), r1.begin() + 10) ==
        std::vector<int64_t>{10678, 55074, 15479, 43095, 7479, 9597, 58338, 41291, 1776, 25909});
  CHECK(std::vector<int64_t>(r1.end() - 3, r1.end()) == std::vector<int64_t>{6024, 31951, 1544});
  // Padding: 10 samples over 3 ranks repeat the head of the permutation.
  CHECK(DistributedSamplerIndices(10, 3, 0) == std::vector<int64_t>{4, 5, 0, 2});
  CHECK(DistributedSamplerIndices(10, 3, 2) == std::vector<int64_t>{7, 9, 6, 1});
  CHECK(DistributedSamplerIndices(7, 1, 0) == std::vector<int64_t>{4, 0, 5, 3, 2, 6, 1});
}

TEST_CASE("unique shards cover the test set once", "[trainer]") {
  auto a = UniqueShard(5, 2, 0), b = UniqueShard(5, 2, 1);
  CHECK(a == std::vector<int64_t>{0, 2, 4});
  CHECK(b == std::vector<int64_t>{1, 3});
}

}  // namespace
}  // namespace pjemu::trainer
