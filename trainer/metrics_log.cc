#include "trainer/metrics_log.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

namespace pjemu::trainer {

MetricsLog::~MetricsLog() {
  if (f_ != nullptr) std::fclose(f_);
}

Status MetricsLog::Open(const std::string& dir, int rank) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InternalError("cannot create --dir " + dir + ": " + ec.message());
  path_ = dir + "/metrics-rank" + std::to_string(rank) + ".jsonl";
  f_ = std::fopen(path_.c_str(), "a");
  if (f_ == nullptr) return InternalError("cannot open metrics file " + path_);
  return events_.Open(dir, LocalHostname(), getpid());
}

void MetricsLog::Step(int64_t epoch, int64_t step, int64_t batch, int64_t batches, float loss,
                      int64_t samples, double time_s) {
  // The reference: niter = epoch * len(train_loader) + batch_idx; add_scalar("loss", loss.item(),
  // niter). A write error is not fatal for training (as for the JSON lines).
  (void)events_.AddScalar("loss", loss, epoch * batches + batch);
  Write(fmt::format(
      R"({{"type":"step","epoch":{},"step":{},"batch":{},"loss":{:.6f},"samples":{},"time":{:.3f}}})",
      epoch, step, batch, loss, samples, time_s));
}

void MetricsLog::Epoch(int64_t epoch, double accuracy, double test_loss, int64_t steps,
                       double train_s, double train_cpu_s, double samples_per_s, double time_s) {
  // The reference: add_scalar("accuracy", correct / len(test set), epoch), with its own shard's
  // count; this is the true accuracy over all ranks, as the printed line (README "Fidelity").
  (void)events_.AddScalar("accuracy", static_cast<float>(accuracy), epoch);
  Write(fmt::format(
      R"({{"type":"epoch","epoch":{},"accuracy":{:.6f},"test_loss":{:.6f},"steps":{},)"
      R"("train_seconds":{:.3f},"train_cpu_seconds":{:.3f},"samples_per_second":{:.1f},)"
      R"("time":{:.3f}}})",
      epoch, accuracy, test_loss, steps, train_s, train_cpu_s, samples_per_s, time_s));
}

void MetricsLog::Write(const std::string& line) {
  if (f_ == nullptr) return;
  std::fputs(line.c_str(), f_);
  std::fputc('\n', f_);
  std::fflush(f_);
}

}  // namespace pjemu::trainer
