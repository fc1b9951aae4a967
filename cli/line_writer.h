#pragma once
// An ostream whose lines reach a file descriptor whole, one write(2) a line, so that what
// another thread writes to the same descriptor (a plugin's output, sent to stderr while the
// JSON report holds stdout) lands between the report's lines, never inside one.
#include <ostream>
#include <streambuf>
#include <string>

namespace gatecheck {

class LineWriter : private std::streambuf, public std::ostream {
 public:
  explicit LineWriter(int fd) : std::ostream(this), fd_(fd) {}
  ~LineWriter() override { flush_line(); }

 private:
  int overflow(int c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override { return flush_line() ? 0 : -1; }
  bool flush_line();

  int fd_;
  std::string line_;
};

}  // namespace gatecheck
