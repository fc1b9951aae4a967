#include "line_writer.h"

#include <unistd.h>

#include <cerrno>

namespace gatecheck {

int LineWriter::overflow(int c) {
  if (c == std::streambuf::traits_type::eof()) return std::streambuf::traits_type::not_eof(c);
  line_.push_back(char(c));
  if (c == '\n' && !flush_line()) return std::streambuf::traits_type::eof();
  return c;
}

std::streamsize LineWriter::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i)
    if (overflow(std::streambuf::traits_type::to_int_type(s[i])) == std::streambuf::traits_type::eof()) return i;
  return n;
}

bool LineWriter::flush_line() {
  size_t done = 0;
  while (done < line_.size()) {
    const ssize_t w = ::write(fd_, line_.data() + done, line_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += size_t(w);
  }
  line_.clear();
  return true;
}

}  // namespace gatecheck
