// SIGTERM handling for pjemu-trainer: the handler only sets a flag; the training loop polls it
// between steps (saves a checkpoint, exits 143) and Comm's watchdog polls it while a collective
// is blocked. Thread safety: async-signal-safe flag, readable from any thread.
#pragma once

namespace pjemu::trainer {

// Installs the SIGTERM handler (idempotent).
void InstallTerminationHandler();
bool TerminationRequested();

}  // namespace pjemu::trainer
