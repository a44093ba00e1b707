#include "trainer/options.h"

#include <CLI/CLI.hpp>

namespace pjemu::trainer {
namespace {

constexpr char kUsage[] =
    "usage: pjemu-trainer [-h] [--batch-size N] [--test-batch-size N] [--epochs N] [--lr LR]\n"
    "                     [--momentum M] [--no-cuda] [--seed S] [--log-interval N] [--save-model]\n"
    "                     [--dir L] [--backend {gloo,nccl,mpi}] [--data-dir D]\n"
    "                     [--checkpoint-dir C] [--collective-timeout SECONDS] [--max-steps N]\n"
    "                     [--kernels {auto,fast,reference}]";

Status UsageError(const std::string& what) {
  return BadRequestError(std::string(kUsage) + "\npjemu-trainer: error: " + what);
}

// Range checks argparse does not do but a trainer needs; each names its flag.
Status Validate(const Options& o) {
  if (o.batch_size <= 0) return UsageError("argument --batch-size: must be > 0");
  if (o.test_batch_size <= 0) return UsageError("argument --test-batch-size: must be > 0");
  if (o.epochs < 0) return UsageError("argument --epochs: must be >= 0");
  if (!(o.lr > 0)) return UsageError("argument --lr: must be > 0");
  if (o.momentum < 0) return UsageError("argument --momentum: must be >= 0");
  if (o.log_interval <= 0) return UsageError("argument --log-interval: must be > 0");
  if (!(o.collective_timeout_s > 0)) {
    return UsageError("argument --collective-timeout: must be > 0 seconds");
  }
  if (o.max_steps < 0) return UsageError("argument --max-steps: must be >= 0");
  if (o.data_dir.empty()) return UsageError("argument --data-dir: must not be empty");
  return Status::Ok();
}

}  // namespace

Result<ParseOutcome> ParseOptions(const std::vector<std::string>& argv) {
  ParseOutcome out;
  Options& o = out.options;
  CLI::App app{"PyTorch FashionMNIST Example (pjemu-trainer, a LibTorch port)", "pjemu-trainer"};
  app.add_option("--batch-size", o.batch_size, "input batch size for training (default: 64)");
  app.add_option("--test-batch-size", o.test_batch_size,
                 "input batch size for testing (default: 1000)");
  app.add_option("--epochs", o.epochs, "number of epochs to train (default: 1)");
  app.add_option("--lr", o.lr, "learning rate (default: 0.01)");
  app.add_option("--momentum", o.momentum, "SGD momentum (default: 0.5)");
  app.add_flag("--no-cuda", o.no_cuda, "disables CUDA training");
  app.add_option("--seed", o.seed, "random seed (default: 1)");
  app.add_option("--log-interval", o.log_interval,
                 "how many batches to wait before logging training status");
  app.add_flag("--save-model", o.save_model, "save the model as mnist_cnn.pt (rank 0)");
  app.add_option("--dir", o.dir, "directory where summary logs are stored (default: logs)");
  app.add_option("--backend", o.backend, "Distributed backend (default: gloo)")
      ->check(CLI::IsMember({"gloo", "nccl", "mpi"}));
  app.add_option("--data-dir", o.data_dir,
                 "folder with the FashionMNIST idx files, .gz or plain (default: " +
                     std::string(kDefaultDataDir) + ")");
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "save model, optimizer and position here; resume from it on start");
  app.add_option("--collective-timeout", o.collective_timeout_s,
                 "seconds before rendezvous or a collective with a dead/hung peer fails "
                 "(default: 300)");
  app.add_option("--max-steps", o.max_steps, "stop training after N steps in total (0: no limit)");
  app.add_option("--kernels", o.kernels,
                 "auto (default: fast); fast: im2col + GEMM step; "
                 "reference: torch's modules, loss lines equal the Python reference's")
      ->check(CLI::IsMember({"auto", "fast", "reference"}));

  std::vector<const char*> args;
  args.reserve(argv.size());
  for (const auto& a : argv) args.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::CallForHelp&) {
    out.help = true;
    out.text = app.help();
    return out;
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }
  RETURN_IF_ERROR(Validate(o));
  return out;
}

}  // namespace pjemu::trainer
