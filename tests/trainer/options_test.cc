// Flag parsing: the reference mnist.py's flags with argparse's behaviour.
#include "trainer/options.h"

#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

Result<ParseOutcome> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "pjemu-trainer");
  return ParseOptions(args);
}

TEST_CASE("defaults equal the reference script's", "[trainer]") {
  auto r = Parse({});
  REQUIRE(r.ok());
  const Options& o = r->options;
  CHECK(o.batch_size == 64);
  CHECK(o.test_batch_size == 1000);
  CHECK(o.epochs == 1);
  CHECK(o.lr == 0.01);
  CHECK(o.momentum == 0.5);
  CHECK_FALSE(o.no_cuda);
  CHECK(o.seed == 1);
  CHECK(o.log_interval == 10);
  CHECK_FALSE(o.save_model);
  CHECK(o.dir == "logs");
  CHECK(o.backend == "gloo");
  CHECK(o.data_dir == "/usr/share/datasets/fashion-mnist");
  CHECK(o.checkpoint_dir.empty());
  CHECK(o.max_steps == 0);
}

TEST_CASE("both --flag=value and --flag value forms parse", "[trainer]") {
  auto r = Parse({"--epochs=3", "--batch-size", "32", "--lr=0.1", "--no-cuda", "--save-model",
                  "--backend", "nccl", "--dir=out", "--max-steps", "7", "--collective-timeout=2.5",
                  "--checkpoint-dir", "/tmp/c"});
  REQUIRE(r.ok());
  const Options& o = r->options;
  CHECK(o.epochs == 3);
  CHECK(o.batch_size == 32);
  CHECK(o.lr == 0.1);
  CHECK(o.no_cuda);
  CHECK(o.save_model);
  CHECK(o.backend == "nccl");
  CHECK(o.dir == "out");
  CHECK(o.max_steps == 7);
  CHECK(o.collective_timeout_s == 2.5);
  CHECK(o.checkpoint_dir == "/tmp/c");
}

TEST_CASE("the kernels flag is auto by default, fast or reference on request", "[trainer]") {
  auto def = Parse({});
  REQUIRE(def.ok());
  CHECK(def->options.kernels == "auto");
  auto fast = Parse({"--kernels", "fast"});
  REQUIRE(fast.ok());
  CHECK(fast->options.kernels == "fast");
  auto ref = Parse({"--kernels=reference"});
  REQUIRE(ref.ok());
  CHECK(ref->options.kernels == "reference");
}

TEST_CASE("bad flags are usage errors naming the flag", "[trainer]") {
  struct Case {
    std::vector<std::string> args;
    std::string names;
  };
  std::vector<Case> cases = {
      {{"--bogus"}, "--bogus"},
      {{"--epochs=x"}, "epochs"},
      {{"--epochs"}, "epochs"},
      {{"--backend", "tcp"}, "backend"},
      {{"--kernels", "mkl"}, "kernels"},
      {{"--batch-size=0"}, "--batch-size"},
      {{"--log-interval", "-1"}, "--log-interval"},
      {{"--collective-timeout=0"}, "--collective-timeout"},
      {{"positional"}, "positional"},
  };
  for (const auto& c : cases) {
    INFO(c.args[0]);
    auto r = Parse(c.args);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kBadRequest);
    CHECK_THAT(r.status().message(), Catch::Contains("usage: pjemu-trainer"));
    CHECK_THAT(r.status().message(), Catch::Contains(c.names));
  }
}

TEST_CASE("the help flag returns the help text", "[trainer]") {
  auto r = Parse({"--help"});
  REQUIRE(r.ok());
  CHECK(r->help);
  CHECK_THAT(r->text, Catch::Contains("--test-batch-size"));
}

}  // namespace
}  // namespace pjemu::trainer
