// Thread settings of a trainer process: intra-op threads from OMP_NUM_THREADS, or cores / ranks
// (LibTorch otherwise defaults to 1 here); OpenBLAS kept to one thread unless
// OPENBLAS_NUM_THREADS says otherwise, so BLAS threads never oversubscribe the cores.
// Flow: main.cc, before any tensor work. Thread safety: call once from main.
#pragma once

#include <string>

namespace pjemu::trainer {

struct ThreadPlan {
  int intra_op = 1;
  int blas = 1;           // 0: left as OpenBLAS decided (OPENBLAS_NUM_THREADS set)
  std::string blas_name;  // "openblas", "other" (not OpenBLAS)
};

// Chooses and applies the plan for `world_size` ranks on this machine.
ThreadPlan ApplyThreadPlan(int world_size);

}  // namespace pjemu::trainer
