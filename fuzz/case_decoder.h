// Deterministic decoding of fuzzer bytes into a small Case of one op and
// batch plan. The bytes choose a CaseSpec (properties/generators.h: dtype,
// shape, index pattern, value class, plan kind, seeds) that the property
// generators materialise, so the fuzzer and the RapidCheck suites share one
// set of patterns, value classes and plans. Then up to 8 "patches" set one
// element of one tensor (or one index entry) to exact bits, which lets
// trace-cmp and the dictionary steer single values (NaN, -0, subnormals...).
//
// FuzzedDataProvider takes the choices from the end of the input, so
// mutations of the head rarely change the shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../case/case.h"
#include "../properties/generate/generators.h"

namespace gatecheck::fuzz {

// Bounds on what the decoder makes: small shapes keep executions fast.
// Rows may reach `tile_rows` (> kGradGateTileRows) rarely, with dim <= 16,
// so grad_gate's tile fold is exercised too, on the kernels' widest vectors.
struct DecodeLimits {
  int64_t max_rows = 65;
  int64_t max_dim = 33;
  int64_t max_gates = 70;
  int64_t tile_rows = 260;  // 0 disables the rare large-rows shape
};

// What the decoder chose, for statistics and fuzzer features. Indices into
// all_index_patterns(), all_value_classes(), and the plan choices: the kinds
// of all_plan_kinds(), then split_plan_kinds() (ranks and micro-batches, which
// split_invariance reads and the invariance properties take as any plan), then
// none (the properties use default_plan() and default_split()).
struct DecodeInfo {
  CaseSpec spec;
  int pattern = 0, values = 0, plan = 0;
  int shape_class = 0;  // see shape_class()
  int patches = 0;
};
int plan_choices();
std::string plan_choice_name(int plan);  // a plan or split kind, or "none"

// A case of `op`. Never throws and never allocates beyond the limits; every
// Case it returns is valid input for the op (indices in range, gates >= 1
// when rows > 0).
Case decode_case(const OpSchema& op, const uint8_t* data, size_t size, const DecodeLimits& limits = {},
                 DecodeInfo* info = nullptr);

// A small integer naming the size class of a case: rows bucket x dim bucket.
constexpr int kShapeClasses = 8 * 5;
int shape_class(int64_t rows, int64_t dim);
std::string shape_class_name(int shape_class);  // "rows4-9 dim1-8"

}  // namespace gatecheck::fuzz
