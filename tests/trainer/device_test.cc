// The reference's device choice: CUDA when a device is visible and --no-cuda is not given, the
// index from LOCAL_RANK, and --backend nccl without CUDA refused with its cause before any
// rendezvous (a non-retryable exit code).
#include "trainer/device.h"

#include <map>

#include "fake_env.h"
#include "trainer/exit_codes.h"

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

EnvLookup Env(std::map<std::string, std::string> m) { return testing::FakeEnv(std::move(m)); }

CudaProbe Gpus(int n) { return CudaProbe{true, n, "2.11.0"}; }
CudaProbe CpuTorch() { return CudaProbe{false, 0, "1.13.0"}; }

TEST_CASE("CUDA when a device is visible, device 0 without LOCAL_RANK", "[trainer][device]") {
  auto d = ChooseDevice(Gpus(1), false, "gloo", Env({{"CUDA_VISIBLE_DEVICES", "3"}}));
  REQUIRE(d.ok());
  CHECK(d->cuda);
  CHECK(d->index == 0);  // index 0 within the visible devices (the host's GPU 3)
}

TEST_CASE("LOCAL_RANK picks the device (torchrun)", "[trainer][device]") {
  auto d = ChooseDevice(Gpus(2), false, "nccl", Env({{"LOCAL_RANK", "1"}}));
  REQUIRE(d.ok());
  CHECK(d->cuda);
  CHECK(d->index == 1);
  auto bad = ChooseDevice(Gpus(2), false, "nccl", Env({{"LOCAL_RANK", "x"}}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "env LOCAL_RANK=\"x\" is not an integer >= 0");
}

TEST_CASE("LOCAL_RANK beyond the visible GPUs: gloo shares them, nccl refuses",
          "[trainer][device]") {
  auto g = ChooseDevice(Gpus(1), false, "gloo", Env({{"LOCAL_RANK", "1"}}));
  REQUIRE(g.ok());
  CHECK(g->index == 0);
  auto n = ChooseDevice(Gpus(1), false, "nccl",
                        Env({{"LOCAL_RANK", "1"}, {"CUDA_VISIBLE_DEVICES", "0"}}));
  REQUIRE_FALSE(n.ok());
  CHECK(ExitCodeFor(n.status()) == kExitUsage);
  CHECK(n.status().message() ==
        "--backend nccl needs a CUDA device: LOCAL_RANK=1 but 1 GPU(s) visible "
        "(CUDA_VISIBLE_DEVICES=0); NCCL takes one rank per GPU");
}

TEST_CASE("no-cuda keeps the CPU, and gloo runs there", "[trainer][device]") {
  auto d = ChooseDevice(Gpus(1), true, "gloo", Env({}));
  REQUIRE(d.ok());
  CHECK_FALSE(d->cuda);
  auto n = ChooseDevice(Gpus(1), true, "nccl", Env({}));
  REQUIRE_FALSE(n.ok());
  CHECK(n.status().message() == "--backend nccl needs a CUDA device: --no-cuda was given");
}

TEST_CASE("no CUDA: the CPU for gloo, a one-line cause for nccl", "[trainer][device]") {
  auto cpu = ChooseDevice(CpuTorch(), false, "gloo", Env({}));
  REQUIRE(cpu.ok());
  CHECK_FALSE(cpu->cuda);
  CHECK(cpu->index == 0);

  struct Case {
    CudaProbe probe;
    std::map<std::string, std::string> env;
    std::string cause;
  };
  const std::vector<Case> cases = {
      {Gpus(0),
       {{"CUDA_VISIBLE_DEVICES", ""}},
       "no GPU visible to this pod (CUDA_VISIBLE_DEVICES is empty: the container asks for no "
       "nvidia.com/gpu)"},
      {CpuTorch(),
       {{"CUDA_VISIBLE_DEVICES", ""}},
       "no GPU visible to this pod (CUDA_VISIBLE_DEVICES is empty: the container asks for no "
       "nvidia.com/gpu)"},
      {CpuTorch(),
       {{"CUDA_VISIBLE_DEVICES", "0"}},
       "this LibTorch 1.13.0 was built without CUDA (build pjemu-trainer against a Torch with "
       "CUDA)"},
      {Gpus(0),
       {{"CUDA_VISIBLE_DEVICES", "7"}},
       "CUDA_VISIBLE_DEVICES=7 leaves no usable GPU visible"},
      {Gpus(0), {}, "no GPU visible to this process (the driver reports no CUDA device)"},
  };
  for (const Case& c : cases) {
    auto r = ChooseDevice(c.probe, false, "nccl", Env(c.env));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "--backend nccl needs a CUDA device: " + c.cause);
    CHECK(r.status().message().find('\n') == std::string::npos);
    CHECK(ExitCodeFor(r.status()) == kExitUsage);  // not retryable: 1-127
  }
}

TEST_CASE("this build's own probe is consistent", "[trainer][device]") {
  const CudaProbe p = ProbeCuda();
  CHECK(p.device_count >= 0);
  if (!p.built_with_cuda) CHECK(p.device_count == 0);
  CHECK_FALSE(p.torch_version.empty());
}

}  // namespace
}  // namespace pjemu::trainer
