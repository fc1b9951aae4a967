// Where a scale session's buffers live and its loops run (scale_session.h):
// host memory and plain loops (scale_backend_host.cpp), or device memory and
// kernels (scale_backend_device.cu). Both compute the same things with the
// same per-element functions (case/scale_values.h, oracles/exact_expected.h,
// scale_fingerprint.h), so the CPU tests exercise the logic the GPU runs.
// Internal to the harness.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../../case/scale_values.h"
#include "../../kernels/gate_residual.h"

namespace gatecheck {

// A scale case that does not fit in the memory it would run in: skipped, with
// this reason, never reported as the implementation's failure.
struct ScaleNoMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Positions: element (r, c) of a run's row tensor holds the value of
// generated position row_map[r] * orig_dim + col_map[c]; the gate table's
// row k that of gate_map[k]. All pointers are backend memory.
struct ScaleGeom {
  int64_t rows = 0, dim = 0, orig_dim = 0;
  const int64_t* row_map = nullptr;      // [rows] generated row of each row (or gate) of the run
  const int64_t* col_map = nullptr;      // [dim]
  const int64_t* gate_of_row = nullptr;  // [rows] generated gate each row uses (exact checks only)
};

// Elements that differ (or fail a test): how many, the smallest flat
// position, and a few more positions.
struct DiffCount {
  int64_t count = 0;
  int64_t first = -1;
  std::vector<int64_t> some;  // up to kSomeDiffs positions (not necessarily the first ones)
};
constexpr int kSomeDiffs = 8;

class ScaleBackend {
 public:
  virtual ~ScaleBackend() = default;
  virtual Device device() const = 0;
  // Memory: `bytes` (>= 1) of backend memory; throws ScaleNoMemory.
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill_bytes(void* dst, uint8_t byte, size_t bytes) = 0;
  // Bytes in [p, p + bytes) that are not `byte`, with the first and last offsets.
  virtual int64_t count_not_byte(const void* p, size_t bytes, uint8_t byte, int64_t* first, int64_t* last) = 0;
  // Values.
  virtual void generate(void* dst, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) = 0;
  virtual DiffCount verify(const void* src, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) = 0;
  virtual void fill_elements(void* dst, int64_t n, DType t, uint32_t bits) = 0;
  // Checks.
  virtual void row_prints(const void* src, int64_t rows, int64_t dim, DType t, uint64_t* out_host) = 0;
  virtual DiffCount compare(const void* a, const void* b, int64_t n, DType t) = 0;
  virtual DiffCount both_poisoned(const void* a, uint32_t pa, const void* b, uint32_t pb, int64_t n, DType t) = 0;
  // Exact values: output 0 out, 1 grad_res, 2 grad_y against exact_expected.h.
  virtual DiffCount exact_rows(const void* got, int output, DType t, const ValueRule& r, const ScaleGeom& g) = 0;
  // grad_gate [gates x dim] against the exact sums over each gate's rows,
  // listed by `members` (run rows, gate by gate) from `offsets` [gates + 1].
  virtual DiffCount exact_gates(const void* got, int64_t gates, DType t, const ValueRule& r, const ScaleGeom& g,
                                const int64_t* offsets, const int64_t* members) = 0;
  // Waits for the backend's work and the implementation's; any error as a Status.
  virtual Status sync() = 0;
  // Is the backend still usable after an error (CUDA: not a sticky error)?
  virtual bool usable() = 0;
};

std::unique_ptr<ScaleBackend> make_host_scale_backend();
// Throws std::runtime_error when there is no CUDA device.
std::unique_ptr<ScaleBackend> make_device_scale_backend();

// Bytes of memory free where a session would run: the device's free memory,
// or the host's available memory (/proc/meminfo).
uint64_t scale_free_bytes(Device d);
uint64_t scale_device_free_bytes();  // 0 without a device

}  // namespace gatecheck
