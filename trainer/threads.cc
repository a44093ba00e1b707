#include "trainer/threads.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <cstdlib>
#include <thread>

namespace pjemu::trainer {

ThreadPlan ApplyThreadPlan(int world_size) {
  ThreadPlan plan;
  const char* omp = std::getenv("OMP_NUM_THREADS");
  int n = omp != nullptr ? std::atoi(omp) : 0;
  if (n <= 0) {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    n = std::max(1, cores / std::max(1, world_size));
  }
  plan.intra_op = n;
  torch::set_num_threads(n);
  // libtorch_cpu resolves libblas.so.3 through the Debian alternative; when that is OpenBLAS,
  // its thread count is set through its own API (looked up at run time, no link dependency).
  using SetThreads = void (*)(int);
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  plan.blas_name = set_threads != nullptr ? "openblas" : "other";
  if (set_threads != nullptr && std::getenv("OPENBLAS_NUM_THREADS") == nullptr) {
    set_threads(1);
    plan.blas = 1;
  } else {
    plan.blas = 0;
  }
  return plan;
}

}  // namespace pjemu::trainer
