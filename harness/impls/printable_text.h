// Text an implementation wrote (a plugin's last_error()), made safe to print
// and to store as JSON.
#pragma once

#include <cstddef>
#include <string>

namespace gatecheck {

// Bytes that are not UTF-8, and control characters other than newline and
// tab (C1's included), become \xNN: an escape sequence would drive the
// reader's terminal, and a report's JSON holds only UTF-8. At most
// `max_bytes` of the text are kept, cut at a character, then a note of how
// many bytes were left out.
std::string printable_text(const std::string& s, size_t max_bytes = 4096);

}  // namespace gatecheck
