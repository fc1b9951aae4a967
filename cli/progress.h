// A live progress line on stderr: rewritten in place on a terminal, one line
// every few seconds otherwise (so CI logs stay readable).
#pragma once

#include <chrono>
#include <string>

namespace gatecheck {

class ProgressLine {
 public:
  ProgressLine();
  void update(const std::string& text);  // rate-limited
  void finish();                         // ends the line on a terminal
 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gatecheck
