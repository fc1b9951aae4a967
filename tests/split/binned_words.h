// The words of a binned sum over terms added in order, for the binned tests:
// Sum is BinnedSum or one of the fp64 forms a GPU thread keeps
// (kernels/binned_sum.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/binned_sum.h"

namespace gatecheck {

template <class Sum>
std::vector<uint64_t> binned_words(const std::vector<float>& t) {
  Sum s;
  s.clear();
  for (float x : t) s.add(x);
  std::vector<uint64_t> w(kBinnedWords);
  s.to_words(w.data());
  return w;
}

}  // namespace gatecheck
