// Bit-for-bit equality of two tensors for GoogleTest (+0 and -0 differ, NaNs
// compare by their bits), reporting where and how they differ.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "case/case.h"

namespace gatecheck::test {

inline ::testing::AssertionResult bits_equal(const std::string& name, const HostTensor& got,
                                             const HostTensor& want) {
  if (got.dtype != want.dtype || got.rows != want.rows || got.cols != want.cols)
    return ::testing::AssertionFailure()
           << name << ": shape/dtype differ: " << dtype_name(got.dtype) << "[" << got.rows << ","
           << got.cols << "] vs " << dtype_name(want.dtype) << "[" << want.rows << "," << want.cols << "]";
  int64_t first = -1, count = 0;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (got.bits(i) != want.bits(i)) {
      if (first < 0) first = i;
      ++count;
    }
  if (count == 0) return ::testing::AssertionSuccess();
  const int64_t cols = got.cols ? got.cols : 1;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %lld of %lld elements differ; first at [%lld, %lld]: got 0x%x (%.9g), want 0x%x (%.9g)",
                name.c_str(), (long long)count, (long long)got.numel(), (long long)(first / cols),
                (long long)(first % cols), got.bits(first), double(got.value(first)), want.bits(first),
                double(want.value(first)));
  return ::testing::AssertionFailure() << buf;
}

}  // namespace gatecheck::test
