// A TensorBoard events file, written as the reference's SummaryWriter writes one: created in the
// log folder as events.out.tfevents.<10-digit seconds>.<hostname>.<pid>.<n>, a first record with
// file_version "brain.Event:2", then one record per scalar (tf_event.h). Each record is flushed
// when written, so a TensorBoard pointed at the folder shows the run live. Every rank writes its
// own file, as every replica of the reference creates a SummaryWriter.
// Flow: MetricsLog (metrics_log.h) owns one and adds "loss" per logged step and "accuracy" per
// epoch. Thread safety: one writer thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "trainer/status.h"

namespace pjemu::trainer {

// Seconds since the Unix epoch, as Python's time.time() (the system clock).
double SystemWallTime();

// This machine's name, as socket.gethostname() gives it ("localhost" if it cannot be read).
std::string LocalHostname();

// "events.out.tfevents.<secs, at least 10 digits>.<host>.<pid>.<n>": the name tensorboard's
// EventFileWriter gives a file (torch.utils.tensorboard uses it; n counts the files this
// process opened, from 0).
std::string EventFileName(int64_t secs, std::string_view host, int64_t pid, int64_t n);

class EventFileWriter {
 public:
  using WallClock = std::function<double()>;  // seconds since the Unix epoch

  explicit EventFileWriter(WallClock clock = SystemWallTime) : clock_(std::move(clock)) {}
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Creates dir and a new events file in it (named with the clock's seconds, host and pid) and
  // writes the file_version record. Fails if the file exists.
  Status Open(const std::string& dir, std::string_view host, int64_t pid);
  // Appends Event{wall_time: clock(), step, summary{value{tag, simple_value: value}}}.
  Status AddScalar(std::string_view tag, float value, int64_t step);
  const std::string& path() const { return path_; }

 private:
  Status Write(const std::string& record);
  WallClock clock_;
  std::FILE* f_ = nullptr;
  std::string path_;
};

}  // namespace pjemu::trainer
