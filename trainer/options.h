// Command-line flags of pjemu-trainer: the reference mnist.py's flags (same names, defaults and
// meaning, parsed like argparse: `--epochs=1` and `--epochs 1`, unknown flags are an error) plus
// the emulator's own (--data-dir, --checkpoint-dir, --collective-timeout, --max-steps). Flow:
// main.cc -> ParseOptions -> TrainLoop. Thread safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "trainer/status.h"

namespace pjemu::trainer {

inline constexpr char kDefaultDataDir[] = "/usr/share/datasets/fashion-mnist";

struct Options {
  int batch_size = 64;
  int test_batch_size = 1000;
  int epochs = 1;
  double lr = 0.01;
  double momentum = 0.5;
  bool no_cuda = false;
  int seed = 1;
  int log_interval = 10;
  bool save_model = false;
  std::string dir = "logs";      // metrics-rank<R>.jsonl goes here
  std::string backend = "gloo";  // gloo | nccl | mpi (mpi is rejected at run time)
  std::string data_dir = kDefaultDataDir;
  std::string checkpoint_dir;         // empty: no checkpoints
  double collective_timeout_s = 300;  // rendezvous and every collective
  long max_steps = 0;                 // 0: no limit; else stop training after this many steps
  // fast: whole-batch im2col + GEMM kernels (fast_net.h); reference: torch's own modules, whose
  // loss lines equal the Python reference's digit for digit (same BLAS and threads); auto: fast
  // (faster at every thread count, README "Speed work" 7-12; kept as a name for scripts).
  std::string kernels = "auto";
};

// Parsed flags, or why not.
struct ParseOutcome {
  Options options;
  bool help = false;  // --help was given: `text` is the help, exit 0
  std::string text;   // help text, or the one-line usage error
};

// Parses argv (argv[0] is the program name). A bad or unknown flag gives a kBadRequest Status
// whose message is "usage: ...\npjemu-trainer: error: <what>", as argparse prints it.
Result<ParseOutcome> ParseOptions(const std::vector<std::string>& argv);

}  // namespace pjemu::trainer
