// The op's plain part against its library op (OpSchema::plain), as
// RL-Kernel's operator report compares its kernel without the modulation
// with nn.RMSNorm (plain_bitwise_vs_nn_rmsnorm): the case with the plain
// inputs set (rmsnorm_modulate: shift -0, scale 0), the implementation's
// ordinary forward call on it, and its plain output against the library
// op's on the same device, bit for bit. Every implementation (host, cuda,
// plugin, python) shows its plain part this way, through the ABI it has.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "../case/case.h"
#include "../harness/impls/implementation.h"

namespace gatecheck {

// The library op's result for a plain case, or why there is none here.
struct PlainReference {
  HostTensor out;           // the plain output's shape
  std::string by;           // what made it: "at::rms_norm (LibTorch 2.11.0) on cuda"
  std::string unavailable;  // why not ("this LibTorch (1.13.0) has no rms_norm ..."); then out is empty
};
using PlainReferenceFn = std::function<PlainReference(const Case& plain, Device d)>;

// One size's comparison.
struct PlainAt {
  int64_t rows = 0, elements = 0;
  int64_t differ = -1;               // elements whose bits differ; -1: not compared (note says why)
  std::string note;                  // what it was compared with, or why it was not
  int64_t at_row = -1, at_col = -1;  // the first differing element (-1: the shapes differ)
  uint32_t bits = 0, want_bits = 0;  // its bits, and the library's
  std::string why;                   // "1 ulp apart", "+0 vs -0", ...
};

// c with each input of its op's plain part set (every element), and no plan.
// Throws std::invalid_argument for an op without one, or one that names an
// input the op does not have.
Case plain_case(const Case& c);

// The library op by the LibTorch this build links, on device d, or why
// there is none (no LibTorch, one without the op, a device it cannot use).
PlainReference libtorch_plain_reference(const Case& plain, Device d);

// impl's plain output: its forward call on the plain case, on its device.
// Throws std::runtime_error with the call's message when the call fails.
HostTensor plain_output(const Implementation& impl, const Case& plain);

// got against the library's bit for bit, except that any NaN matches any NaN
// (the modulation's * 1 and + (-0) may change a NaN's payload).
PlainAt compare_plain(const HostTensor& got, const HostTensor& want);

}  // namespace gatecheck
