#include "emulator/cli/signals.h"

#include <csignal>

#include <atomic>

namespace pjemu::cli {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnStopSignal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
}

}  // namespace

void InstallStopSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A closed pipe (`pjemu run | head`) must not kill us before the cluster is stopped.
  signal(SIGPIPE, SIG_IGN);
}

int StopSignal() { return g_signal.load(); }

}  // namespace pjemu::cli
