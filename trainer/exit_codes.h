// Exit codes of pjemu-trainer: the contract between the trainer process and the PyTorchJob
// restart policy (ExitCode policy: 1-127 permanent, 128-255 retryable). main.cc maps the Status
// codes of the trainer library onto these; nothing else calls exit().
// Thread safety: constants only.
#pragma once

#include "trainer/status.h"

namespace pjemu::trainer {

inline constexpr int kExitOk = 0;
// Bad input that a restart cannot fix: missing/corrupt data, unreachable master, checkpoint
// mismatch.
inline constexpr int kExitError = 1;
// Bad flags or a wrong environment (RANK >= WORLD_SIZE, bad MASTER_PORT): argparse's usage code.
inline constexpr int kExitUsage = 2;
// A peer died or hung (collective failed or timed out): retryable, restart the whole group.
inline constexpr int kExitPeerLost = 200;
// SIGTERM: a checkpoint was saved (when --checkpoint-dir is set), 128 + 15.
inline constexpr int kExitTerminated = 143;

// The exit code for a failed Status: kUnavailable/kTimeout -> kExitPeerLost, kBadRequest and
// kInvalid -> kExitUsage, anything else -> kExitError.
inline int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
      return kExitOk;
    case Code::kUnavailable:
    case Code::kTimeout:
      return kExitPeerLost;
    case Code::kBadRequest:
    case Code::kInvalid:
      return kExitUsage;
    default:
      return kExitError;
  }
}

}  // namespace pjemu::trainer
