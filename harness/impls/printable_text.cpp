#include "printable_text.h"

#include <cstdio>

namespace gatecheck {

namespace {

// The length of the UTF-8 sequence at s[i] (1 to 4), or 0 where it is not one
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = b(i);
  const auto cont = [&](size_t k) { return (b(k) & 0xC0u) == 0x80u; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned d = b(i + 1);
    if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F)) return 0;
    return cont(i + 1) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned d = b(i + 1);
    if ((c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F)) return 0;
    return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

std::string hex_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

}  // namespace

std::string printable_text(const std::string& s, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8_length(s, i);
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::string piece;
    if (n == 0) piece = hex_escape(c);  // one byte at a time: the next may start a good sequence
    else if (n == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) piece = hex_escape(c);
    else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0)  // U+0080..U+009F: C1 controls
      piece = hex_escape(c) + hex_escape(static_cast<unsigned char>(s[i + 1]));
    else piece = s.substr(i, n);
    if (out.size() + piece.size() > max_bytes) {
      out += "... (" + std::to_string(s.size() - i) + " more bytes left out)";
      return out;
    }
    out += piece;
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace gatecheck
