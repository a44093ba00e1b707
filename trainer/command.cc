// pjemu-trainer's command: flags -> device -> env -> threads -> rendezvous -> RunTraining,
// then Status mapped to the exit codes in exit_codes.h. Error paths leave with _exit so no
// process-group destructor can hang.
#include "trainer/command.h"

#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "trainer/device.h"
#include "trainer/dist_env.h"
#include "trainer/exit_codes.h"
#include "trainer/options.h"
#include "trainer/termination.h"
#include "trainer/threads.h"
#include "trainer/train_loop.h"

namespace pjemu::trainer {
namespace {

std::atomic<bool> g_training{false};

[[noreturn]] void Fail(const Status& s) {
  std::fprintf(stderr, "pjemu-trainer: error: %s\n", s.message().c_str());
  std::fflush(nullptr);
  _exit(ExitCodeFor(s));
}

}  // namespace

int RunTrainerCommand(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  Result<ParseOutcome> parsed = ParseOptions(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
    return kExitUsage;
  }
  if (parsed->help) {
    std::printf("%s", parsed->text.c_str());
    return kExitOk;
  }
  const Options& o = parsed->options;
  InstallTerminationHandler();
  // Until training starts (data load, rendezvous that may wait for absent peers), SIGTERM has
  // nothing to save: leave at once instead of after the rendezvous timeout.
  std::thread([] {
    while (!g_training.load()) {
      if (TerminationRequested()) {
        std::fflush(nullptr);
        _exit(kExitTerminated);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }).detach();
  // The reference's device choice, before any rendezvous: nccl without a GPU fails here.
  Result<DeviceChoice> device = ChooseDevice(ProbeCuda(), o.no_cuda, o.backend, ProcessEnv);
  if (!device.ok()) Fail(device.status());
  if (device->cuda) {
    UseDevice(*device);
    std::printf("Using CUDA\n");
    if (o.backend != "nccl") {  // the reference's own advice, word for word
      std::printf(
          "Warning. Please use `nccl` distributed backend for the best performance using GPUs\n");
    }
  }
  std::printf("Using distributed PyTorch with %s backend\n", o.backend.c_str());
  std::fflush(stdout);
  Result<DistEnv> env = ReadDistEnv();
  if (!env.ok()) Fail(env.status());
  std::printf("World Size: %d. Rank: %d\n", env->world_size, env->rank);
  std::fflush(stdout);
  ApplyThreadPlan(env->world_size);
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(o.collective_timeout_s * 1000));
  Result<std::unique_ptr<Comm>> comm = ConnectComm(*env, o.backend, timeout);
  if (!comm.ok()) {
    if (TerminationRequested()) _exit(kExitTerminated);  // the signal interrupted a connect
    Fail(comm.status());
  }
  g_training.store(true);
  Result<RunSummary> run = RunTraining(o, *device, **comm, stdout);
  if (TerminationRequested() || (run.ok() && run->terminated)) {
    std::fprintf(
        stderr, "pjemu-trainer: SIGTERM: %s\n",
        o.checkpoint_dir.empty() ? "no --checkpoint-dir, nothing saved" : "checkpoint saved");
    std::fflush(nullptr);
    _exit(kExitTerminated);
  }
  if (!run.ok()) Fail(run.status());
  return kExitOk;
}

}  // namespace pjemu::trainer
