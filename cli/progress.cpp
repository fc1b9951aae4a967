#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace gatecheck {

ProgressLine::ProgressLine() : tty_(isatty(2)) {}

void ProgressLine::update(const std::string& text) {
  const auto now = std::chrono::steady_clock::now();
  const auto gap = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(5000);
  if (shown_ && now - last_ < gap) return;
  last_ = now;
  shown_ = true;
  if (tty_) std::fprintf(stderr, "\r\033[K%s", text.c_str());
  else std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (tty_ && shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace gatecheck
