// Deterministic decoding of fuzzer bytes into a small gate_residual Case and
// batch plan. The same bytes give the same Case on every machine (our own
// splitmix64 and arithmetic normals, no <random> distributions), so a crash
// input found anywhere replays identically.
//
// Layout (FuzzedDataProvider: choices come from the end, so mutations of the
// head rarely change the shape): dtype, shape, index pattern, value class,
// batch plan, a value seed, then up to 8 "patches" that set one element of
// one tensor to exact bits, which lets trace-cmp steer single values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../properties/case.h"

namespace gatecheck::fuzz {

// Index patterns (names shared with the property generators of issue 3).
enum class IndexPattern : uint8_t {
  sorted_equal, sorted_random, single, identity, uniform, reversed,
  giant_tiny, unused_gates, h3_shared, max_heavy, count
};
// Value classes.
enum class ValueClass : uint8_t {
  normal, small_int, mixed, order_sensitive, subnormal, near_overflow,
  signed_zero, specials, raw_bits, count
};
// Batch plans (BatchPlan::kind), plus "none".
enum class PlanKind : uint8_t {
  none, partition, singletons, prior_art, thresholds, probe, permutation, reversal, repeat, count
};

const char* index_pattern_name(IndexPattern p);
const char* value_class_name(ValueClass v);
const char* plan_kind_name(PlanKind k);

// Bounds on what the decoder makes: small shapes keep executions fast.
// Rows may reach `tile_rows` (> kGradGateTileRows) rarely, so grad_gate's
// tile fold is exercised too.
struct DecodeLimits {
  int64_t max_rows = 65;
  int64_t max_dim = 33;
  int64_t max_gates = 70;
  int64_t tile_rows = 260;  // 0 disables the rare large-rows shape
};

// What the decoder chose, for statistics and fuzzer features.
struct DecodeInfo {
  IndexPattern pattern = IndexPattern::sorted_equal;
  ValueClass values = ValueClass::normal;
  PlanKind plan = PlanKind::none;
  int shape_class = 0;  // see shape_class()
  int patches = 0;
};

// Never throws and never allocates beyond the limits; every Case it returns
// is valid input for the op (indices in range, gates >= 1).
Case decode_case(const uint8_t* data, size_t size, const DecodeLimits& limits = {},
                 DecodeInfo* info = nullptr);

// A small integer naming the size class of a case: rows bucket x dim bucket.
// kShapeClasses classes in all.
constexpr int kShapeClasses = 8 * 5;
int shape_class(int64_t rows, int64_t dim);
std::string shape_class_name(int shape_class);  // "rows4-9 dim1-8"

}  // namespace gatecheck::fuzz
