// The library side of the plain part's comparison, where this build's
// LibTorch has rms_norm (PyTorch 2.4 and later; skipped on an older one): on
// data where RMSNorm is exact in every order, at::rms_norm (what nn.RMSNorm
// runs) gives the host-made plain part bit for bit, so the reference takes
// the weight and eps as it must; one bit off is caught; and the host twin's
// plain part through its ordinary forward call matches it. On CUDA too where
// there is a GPU (test_sweep_plain_rms_norm_cuda: the `cuda` implementation).
#include <gtest/gtest.h>

#include "plain_exact_case.h"
#include "properties/catalog/contract.h"
#include "sweep/sweep_plain.h"

// The CUDA build of this file (GC_PLAIN_DEVICE=cuda) names its suite apart.
#ifndef GC_PLAIN_DEVICE
#define GC_PLAIN_DEVICE cpu
#define GC_PLAIN_SUITE SweepPlainRmsNorm
#else
#define GC_PLAIN_SUITE SweepPlainRmsNormCuda
#endif

namespace gatecheck {
namespace {

using plain_test::exact_case;
using plain_test::exact_plain;

constexpr Device kDevice = Device::GC_PLAIN_DEVICE;

// The reference on kDevice, or a skip naming why there is none.
#define REFERENCE_OR_SKIP(ref, plain)                                                              \
  if (kDevice == Device::cuda && !cuda_available()) GTEST_SKIP() << "no CUDA device";              \
  const PlainReference ref = libtorch_plain_reference(plain, kDevice);                             \
  if (!ref.unavailable.empty()) GTEST_SKIP() << "no reference: " << ref.unavailable

TEST(GC_PLAIN_SUITE, TheLibraryGivesTheExactPlainPart) {
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int64_t dim : {1, 37, 1031, 5376}) {
      const Case p = plain_case(exact_case(t, 7, dim, uint64_t(dim) + 1));
      REFERENCE_OR_SKIP(ref, p);
      const PlainAt a = compare_plain(ref.out, exact_plain(p));
      EXPECT_EQ(a.differ, 0) << ref.by << " " << dtype_name(t) << " dim " << dim << ": first [" << a.at_row << ", "
                             << a.at_col << "] " << a.why;
    }
}

TEST(GC_PLAIN_SUITE, OneBitOffIsCaught) {
  const Case p = plain_case(exact_case(DType::bf16, 3, 64, 9));
  REFERENCE_OR_SKIP(ref, p);
  HostTensor got = ref.out;
  got.set_bits(70, got.bits(70) ^ 1u);
  const PlainAt a = compare_plain(got, ref.out);
  EXPECT_EQ(a.differ, 1);
  EXPECT_EQ(a.at_row, 1);
  EXPECT_EQ(a.at_col, 6);
}

TEST(GC_PLAIN_SUITE, AnImplementationsPlainPartMatchesIt) {
  const char* impl = kDevice == Device::cuda ? "cuda" : "host";
  for (DType t : {DType::f32, DType::bf16}) {
    const Case p = plain_case(exact_case(t, 9, 1031, 4));
    REFERENCE_OR_SKIP(ref, p);
    const Subject s = make_subject(impl, kDevice, rmsnorm_modulate_schema());
    const PlainAt a = compare_plain(plain_output(s, p), ref.out);
    EXPECT_EQ(a.differ, 0) << impl << " " << dtype_name(t) << " against " << ref.by << ": first [" << a.at_row
                           << ", " << a.at_col << "] " << a.why;
  }
}

}  // namespace
}  // namespace gatecheck
