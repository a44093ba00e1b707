// The metrics a trainer rank writes into --dir (schemas in trainer/README.md):
// - the JSON-lines file "<--dir>/metrics-rank<R>.jsonl": one "step" line per logged step, one
//   "epoch" line per epoch; scenarios and the web console read it. Appends, so a resumed run
//   continues the same file;
// - a TensorBoard events file (event_file_writer.h) with the reference's scalars: "loss" per
//   logged step at step epoch * batches + batch, "accuracy" per epoch at step epoch. A resumed
//   run starts a new events file, as a restarted SummaryWriter does.
// Each line and record is flushed when written. Thread safety: one writer thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "trainer/event_file_writer.h"
#include "trainer/status.h"

namespace pjemu::trainer {

class MetricsLog {
 public:
  MetricsLog() = default;
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // Creates dir, opens "<dir>/metrics-rank<rank>.jsonl" for appending and creates a new events
  // file (named for this host and process).
  Status Open(const std::string& dir, int rank);
  const std::string& path() const { return path_; }
  const std::string& events_path() const { return events_.path(); }

  // batches: the batches of an epoch on this rank (the reference's len(train_loader)).
  void Step(int64_t epoch, int64_t step, int64_t batch, int64_t batches, float loss,
            int64_t samples, double time_s);
  void Epoch(int64_t epoch, double accuracy, double test_loss, int64_t steps, double train_s,
             double train_cpu_s, double samples_per_s, double time_s);

 private:
  void Write(const std::string& line);
  std::FILE* f_ = nullptr;
  std::string path_;
  EventFileWriter events_;
};

}  // namespace pjemu::trainer
