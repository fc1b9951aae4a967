// A module that formats a number through an ostream, linked with -static-libstdc++: the
// planted case for exports_no_libstdcxx.sh (tests/cuda/CMakeLists.txt), which must flag it
// unless --exclude-libs,ALL keeps its libstdc++ to itself.
#include <sstream>
#include <string>

extern "C" const char* gc_test_format_number(long v) {
  static std::string text;
  std::ostringstream out;
  out << "got " << v;
  text = out.str();
  return text.c_str();
}
