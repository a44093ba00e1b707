// The JSON-lines metrics file a trainer rank writes to "<--dir>/metrics-rank<R>.jsonl" (schema in
// trainer/README.md): one "step" line per logged step, one "epoch" line per epoch. Scenarios and
// the web console read it. Appends, so a resumed run continues the same file; each line is
// flushed when written. Thread safety: one writer thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "emulator/common/status.h"

namespace pjemu::trainer {

class MetricsLog {
 public:
  MetricsLog() = default;
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // Creates dir and opens "<dir>/metrics-rank<rank>.jsonl" for appending.
  Status Open(const std::string& dir, int rank);
  const std::string& path() const { return path_; }

  void Step(int64_t epoch, int64_t step, int64_t batch, double loss, int64_t samples,
            double time_s);
  void Epoch(int64_t epoch, double accuracy, double test_loss, int64_t steps, double train_s,
             double train_cpu_s, double samples_per_s, double time_s);

 private:
  void Write(const std::string& line);
  std::FILE* f_ = nullptr;
  std::string path_;
};

}  // namespace pjemu::trainer
