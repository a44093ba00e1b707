// Checkpoints round-trip, are replaced atomically, and a damaged one is an error.
#include "trainer/checkpoint.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace pjemu::trainer {
namespace {

namespace fs = std::filesystem;

TEST_CASE("checkpoint round trip", "[trainer]") {
  const pjemu::testing::TempDir tmp;
  const std::string dir = tmp.path();
  auto none = LoadCheckpoint(dir);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  Checkpoint c;
  c.params = torch::rand({100});
  c.momentum = torch::rand({100});
  c.epoch = 2;
  c.next_batch = 17;
  c.global_step = 486;
  c.world_size = 2;
  c.batch_size = 64;
  REQUIRE(SaveCheckpoint(dir + "/sub", c).ok());
  CHECK_FALSE(fs::exists(dir + "/sub/checkpoint.pt.tmp"));
  auto back = LoadCheckpoint(dir + "/sub");
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  const Checkpoint& d = **back;
  CHECK(torch::equal(d.params, c.params));
  CHECK(torch::equal(d.momentum, c.momentum));
  CHECK(d.epoch == 2);
  CHECK(d.next_batch == 17);
  CHECK(d.global_step == 486);
  CHECK(d.world_size == 2);

  c.momentum = torch::Tensor();  // before the first step there is no momentum buffer
  c.next_batch = 18;
  REQUIRE(SaveCheckpoint(dir + "/sub", c).ok());
  auto again = LoadCheckpoint(dir + "/sub");
  REQUIRE(again.ok());
  CHECK_FALSE((*again)->momentum.defined());
  CHECK((*again)->next_batch == 18);

  std::ofstream(dir + "/sub/checkpoint.pt", std::ios::trunc) << "not a checkpoint";
  auto bad = LoadCheckpoint(dir + "/sub");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("unreadable checkpoint"));
}

}  // namespace
}  // namespace pjemu::trainer
