#include "line_writer.h"

#include "../harness/impls/fd_write.h"

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
  if (!write_all(fd_, line_.data(), line_.size())) return false;
  line_.clear();
  return true;
}

}  // namespace gatecheck
