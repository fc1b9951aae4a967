#include "scale_check_detail.h"

#include <algorithm>
#include <cctype>

#include "../../harness/scale/scale_backend.h"

namespace gatecheck::scale_detail {

std::vector<ScaleOutput> every_output(const ScaleCase& c) {
  std::vector<ScaleOutput> v;
  for (size_t o = 0; o < c.op().outputs.size(); ++o) v.push_back(int(o));
  return v;
}

namespace {
bool out_of_memory(const std::string& msg) {
  std::string m = msg;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return m.find("out of memory") != std::string::npos || m.find("memoryallocation") != std::string::npos;
}
}  // namespace

Verdict failed_run(const Implementation& impl, ScaleSession& s, const ScaleCase& c, const std::string& what,
                   const Status& st) {
  if (out_of_memory(st.message))
    throw ScaleNoMemory("the implementation ran out of memory on " + describe(c) + ": " + st.message);
  Verdict v;
  v.passed = false;
  v.message = impl.label() + " " + what + " returned an error on valid input (" + describe(c) + "): [" +
              error_kind_name(st.kind) + "] " + st.message;
  if (impl.device == Device::cuda && !s.usable())
    v.message += " (the CUDA context is lost: this process cannot use the device any more)";
  return v;
}

std::string head(const Implementation& impl, const ScaleCase& c) { return impl.label() + " on " + describe(c) + ": "; }

void sort_unique(std::vector<int64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace gatecheck::scale_detail
