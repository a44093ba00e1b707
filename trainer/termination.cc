#include "trainer/termination.h"

#include <atomic>
#include <csignal>

namespace pjemu::trainer {
namespace {

std::atomic<bool> g_term{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnTerm(int) { g_term.store(true); }

}  // namespace

void InstallTerminationHandler() {
  struct sigaction sa = {};
  sa.sa_handler = OnTerm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
}

bool TerminationRequested() { return g_term.load(); }

}  // namespace pjemu::trainer
