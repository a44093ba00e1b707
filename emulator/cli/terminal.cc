#include "emulator/cli/terminal.h"

#include <unistd.h>

#include <cstdlib>

namespace pjemu::cli {

Terminal Terminal::ForStdout() {
  bool tty = ::isatty(STDOUT_FILENO) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if ((no_color && *no_color) || (term && std::string_view(term) == "dumb")) tty = false;
  return Terminal(stdout, tty);
}

std::string Terminal::Paint(std::string_view text, Color color) const {
  if (!tty_ || color == Color::kNone) return std::string(text);
  const char* code = "";
  switch (color) {
    case Color::kRed: code = "\033[31m"; break;
    case Color::kGreen: code = "\033[32m"; break;
    case Color::kYellow: code = "\033[33m"; break;
    case Color::kBlue: code = "\033[34m"; break;
    case Color::kDim: code = "\033[2m"; break;
    case Color::kBold: code = "\033[1m"; break;
    case Color::kNone: break;
  }
  return std::string(code) + std::string(text) + "\033[0m";
}

void Terminal::Line(std::string_view text) {
  if (tty_ && !live_.empty()) std::fputs("\r\033[2K", out_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fputc('\n', out_);
  if (tty_ && !live_.empty()) std::fputs(live_.c_str(), out_);
  std::fflush(out_);
}

void Terminal::Live(std::string_view text) {
  if (!tty_) return;
  live_ = std::string(text);
  std::fputs("\r\033[2K", out_);
  std::fputs(live_.c_str(), out_);
  std::fflush(out_);
}

void Terminal::ClearLive() {
  if (!tty_ || live_.empty()) return;
  live_.clear();
  std::fputs("\r\033[2K", out_);
  std::fflush(out_);
}

Color ColorFor(std::string_view state) {
  if (state == "Succeeded" || state == "Completed") return Color::kGreen;
  if (state == "Failed" || state == "Error" || state == "OOMKilled" ||
      state == "CrashLoopBackOff" || state == "ErrImagePull" || state == "InvalidImageName") {
    return Color::kRed;
  }
  if (state == "Restarting" || state == "Pending" || state == "Created") return Color::kYellow;
  if (state == "Running") return Color::kBlue;
  return Color::kNone;
}

}  // namespace pjemu::cli
