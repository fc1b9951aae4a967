// One write(2) loop for the places that hand bytes straight to a file descriptor (the report's
// stream, a child's reply, the CLI's stderr lines): every byte written, EINTR retried.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace gatecheck {

// False on an error or a descriptor that takes nothing (errno says which); the rest is unwritten.
inline bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

}  // namespace gatecheck
