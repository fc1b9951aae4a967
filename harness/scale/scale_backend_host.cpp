// The host backend of a scale session (scale_backend.h): plain memory and
// loops, for implementations on the CPU.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "../../oracles/exact_expected.h"
#include "scale_backend.h"
#include "scale_fingerprint.h"

namespace gatecheck {

namespace {

uint32_t load_bits(const void* p, int64_t i, DType t) {
  if (t == DType::f32) {
    uint32_t b;
    std::memcpy(&b, static_cast<const uint8_t*>(p) + i * 4, 4);
    return b;
  }
  uint16_t h;
  std::memcpy(&h, static_cast<const uint8_t*>(p) + i * 2, 2);
  return h;
}

void store_bits(void* p, int64_t i, DType t, uint32_t b) {
  if (t == DType::f32) {
    std::memcpy(static_cast<uint8_t*>(p) + i * 4, &b, 4);
  } else {
    const uint16_t h = uint16_t(b);
    std::memcpy(static_cast<uint8_t*>(p) + i * 2, &h, 2);
  }
}

void note(DiffCount& d, int64_t i) {
  ++d.count;
  if (d.first < 0 || i < d.first) d.first = i;
  if (int(d.some.size()) < kSomeDiffs) d.some.push_back(i);
}

uint64_t position(const ScaleGeom& g, int64_t r, int64_t c) {
  return uint64_t(g.row_map[r]) * uint64_t(g.orig_dim) + uint64_t(g.col_map[c]);
}

class HostBackend final : public ScaleBackend {
 public:
  Device device() const override { return Device::cpu; }
  void* alloc(size_t bytes) override {
    void* p = ::operator new(bytes ? bytes : 1, std::nothrow);
    if (!p) throw ScaleNoMemory("host allocation of " + std::to_string(bytes) + " bytes failed");
    return p;
  }
  void release(void* p) override { ::operator delete(p); }
  void upload(void* dst, const void* src, size_t bytes) override { if (bytes) std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { if (bytes) std::memcpy(dst, src, bytes); }
  void fill_bytes(void* dst, uint8_t byte, size_t bytes) override { if (bytes) std::memset(dst, byte, bytes); }
  int64_t count_not_byte(const void* p, size_t bytes, uint8_t byte, int64_t* first, int64_t* last) override {
    const auto* b = static_cast<const uint8_t*>(p);
    int64_t n = 0;
    for (size_t i = 0; i < bytes; ++i)
      if (b[i] != byte) {
        if (n++ == 0) *first = int64_t(i);
        *last = int64_t(i);
      }
    return n;
  }
  void generate(void* dst, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) override {
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t c = 0; c < g.dim; ++c) store_bits(dst, i * g.dim + c, t, scale_bits(t, r, which, position(g, i, c)));
  }
  DiffCount verify(const void* src, DType t, const ValueRule& r, ScaleTensor which, const ScaleGeom& g) override {
    DiffCount d;
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t c = 0; c < g.dim; ++c)
        if (load_bits(src, i * g.dim + c, t) != scale_bits(t, r, which, position(g, i, c))) note(d, i * g.dim + c);
    return d;
  }
  void fill_elements(void* dst, int64_t n, DType t, uint32_t bits) override {
    for (int64_t i = 0; i < n; ++i) store_bits(dst, i, t, bits);
  }
  void row_prints(const void* src, int64_t rows, int64_t dim, DType t, uint64_t* out) override {
    for (int64_t r = 0; r < rows; ++r) {
      uint64_t h = 0;
      for (int64_t c = 0; c < dim; ++c) h += scale_print_term(load_bits(src, r * dim + c, t), c);
      out[r] = h;
    }
  }
  DiffCount compare(const void* a, const void* b, int64_t n, DType t) override {
    DiffCount d;
    for (int64_t i = 0; i < n; ++i)
      if (load_bits(a, i, t) != load_bits(b, i, t)) note(d, i);
    return d;
  }
  DiffCount both_poisoned(const void* a, uint32_t pa, const void* b, uint32_t pb, int64_t n, DType t) override {
    DiffCount d;
    for (int64_t i = 0; i < n; ++i)
      if (load_bits(a, i, t) == pa && load_bits(b, i, t) == pb) note(d, i);
    return d;
  }
  DiffCount exact_rows(const void* got, int output, DType t, const ValueRule& r, const ScaleGeom& g) override {
    DiffCount d;
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t c = 0; c < g.dim; ++c) {
        const uint64_t pos = position(g, i, c);
        const uint64_t gpos = uint64_t(g.gate_of_row[i]) * uint64_t(g.orig_dim) + uint64_t(g.col_map[c]);
        const uint32_t want = output == 0   ? exact_out_bits(t, r, pos, gpos)
                              : output == 1 ? exact_grad_res_bits(t, r, pos)
                                            : exact_grad_y_bits(t, r, pos, gpos);
        if (load_bits(got, i * g.dim + c, t) != want) note(d, i * g.dim + c);
      }
    return d;
  }
  DiffCount exact_gates(const void* got, int64_t gates, DType t, const ValueRule& r, const ScaleGeom& g,
                        const int64_t* offsets, const int64_t* members) override {
    DiffCount d;
    std::vector<int64_t> sum(size_t(g.dim));
    std::vector<uint8_t> nonzero(size_t(g.dim));
    for (int64_t k = 0; k < gates; ++k) {
      std::fill(sum.begin(), sum.end(), 0);
      std::fill(nonzero.begin(), nonzero.end(), 0);
      for (int64_t m = offsets[k]; m < offsets[k + 1]; ++m)
        for (int64_t c = 0; c < g.dim; ++c) {
          const int64_t u = exact_term_units(r, position(g, members[m], c));
          sum[size_t(c)] += u;
          nonzero[size_t(c)] |= u != 0;
        }
      const bool any = offsets[k + 1] > offsets[k];
      for (int64_t c = 0; c < g.dim; ++c) {
        const ExactGateExpect e = exact_grad_gate_bits(t, r.frac_bits, sum[size_t(c)], any, nonzero[size_t(c)]);
        const uint32_t b = load_bits(got, k * g.dim + c, t);
        if (b != e.bits && b != e.alt_bits) note(d, k * g.dim + c);
      }
    }
    return d;
  }
  Status sync() override { return Status::success(); }
  bool usable() override { return true; }
};

}  // namespace

std::unique_ptr<ScaleBackend> make_host_scale_backend() { return std::make_unique<HostBackend>(); }

uint64_t scale_free_bytes(Device d) {
  if (d == Device::cuda) return scale_device_free_bytes();
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace gatecheck
