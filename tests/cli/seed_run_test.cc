// Slow: `pjemu run` of the seed jobs with the real trainer (FashionMNIST, world size 2): seed 003
// unmodified must end Succeeded with the true test accuracy (about 0.69) in the summary, and the
// nccl seed must run on CPU through the documented image map.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;

TEST_CASE("run of seed 003 ends Succeeded with the true test accuracy", "[cli][slow]") {
  std::string out_dir = TempDir("seed-003");
  CliResult r = RunPjemu({"run", "-f", "fixtures/seeds/pytorch-simple.yaml", "--output", "json",
                          "--output-dir", out_dir, "--timeout", "8m"},
                         9min);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["jobs"].size() == 1);
  CHECK(j["jobs"][0]["name"] == "pytorch-simple");
  CHECK(j["jobs"][0]["condition"] == "Succeeded");
  REQUIRE(j["jobs"][0]["accuracy"].is_number());
  double accuracy = j["jobs"][0]["accuracy"].get<double>();
  CHECK(accuracy > 0.6);
  CHECK(accuracy < 0.8);
}

TEST_CASE("run of the nccl seed on CPU through seed-nccl-on-cpu.yaml Succeeds", "[cli][slow]") {
  CliResult r = RunPjemu({"run", "-f", "fixtures/seeds/pytorch_job_mnist_nccl.yaml",
                          "--image-map", "fixtures/image-maps/seed-nccl-on-cpu.yaml", "--gpus",
                          "2", "--timeout", "8m"},
                         9min);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("gloo") != std::string::npos);
  CHECK(r.out.find("Succeeded") != std::string::npos);
}

TEST_CASE("seed 000 verbatim on one GPU shared by time-slicing Succeeds", "[cli][slow]") {
  // One (pretend) GPU advertised twice: Master and Worker both schedule and both see GPU 0; on
  // this CPU-only machine the trainer runs gloo on the CPU, as the map rewrites nccl to gloo.
  std::string out_dir = TempDir("seed-000-shared");
  CliResult r = RunPjemu({"run", "-f", "fixtures/seeds/pytorch_job_mnist_nccl.yaml",
                          "--image-map", "fixtures/image-maps/seed-nccl-shared-gpu.yaml", "--gpus",
                          "1", "--gpu-sharing", "2", "--timeout", "8m", "--output", "json",
                          "--output-dir", out_dir},
                         9min);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["jobs"].size() == 1);
  CHECK(j["jobs"][0]["condition"] == "Succeeded");
}

TEST_CASE("run refuses a --gpu-sharing that is not a positive number", "[cli]") {
  CliResult r = RunPjemu({"run", "-f", "fixtures/seeds/pytorch-simple.yaml", "--gpu-sharing", "0"},
                         60s);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--gpu-sharing") != std::string::npos);
}

}  // namespace
}  // namespace pjemu::testing
