// Terminal output for the CLI: colour only when the stream is a TTY (and NO_COLOR is unset),
// plain lines otherwise (CI, pipes), and a rewritable status line for live progress on a TTY.
// Thread safety: one Terminal per stream, used from one thread.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace pjemu::cli {

enum class Color { kNone, kRed, kGreen, kYellow, kBlue, kDim, kBold };

class Terminal {
 public:
  // tty: whether `out` is an interactive terminal (decides colour and live lines).
  Terminal(std::FILE* out, bool tty) : out_(out), tty_(tty) {}
  // A Terminal for stdout that detects the TTY and honours NO_COLOR.
  static Terminal ForStdout();

  bool tty() const { return tty_; }
  // text wrapped in the colour's escape codes on a TTY; text unchanged otherwise.
  std::string Paint(std::string_view text, Color color) const;
  // Prints one permanent line (clearing a live line first, and redrawing it after).
  void Line(std::string_view text);
  // TTY only: replaces the live bottom line (progress bar). No-op when not a TTY.
  void Live(std::string_view text);
  // Removes the live line.
  void ClearLive();

 private:
  std::FILE* out_;
  bool tty_;
  std::string live_;
};

// The colour for a job condition or pod phase: green Succeeded, red Failed, yellow
// Restarting/Pending, blue Running, none otherwise.
Color ColorFor(std::string_view state);

}  // namespace pjemu::cli
