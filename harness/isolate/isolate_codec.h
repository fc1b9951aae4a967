// The byte encoding between gatecheck and its isolated children (isolate.h):
// requests (a case to run, or a named task), and what comes back (a
// RunResult, a Status, a kept child's reply). Fixed-width little-endian
// integers and length-prefixed bytes; the reader checks every length, so a
// child that dies mid-write is seen as truncated.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../run/runner.h"

namespace gatecheck::isolate_detail {

constexpr uint32_t kMagic = 0x31524347;  // "GCR1"

class Writer {
 public:
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void bytes(const void* p, size_t n) {
    i64(int64_t(n));
    raw(p, n);
  }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void tensor(const HostTensor& t) {
    u32(uint32_t(t.dtype));
    i64(t.rows);
    i64(t.cols);
    bytes(t.bytes.data(), t.bytes.size());
  }
  void status(const Status& s) {
    u32(uint32_t(s.kind));
    str(s.message);
  }
  std::vector<uint8_t> buf;

 private:
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf.insert(buf.end(), b, b + n);
  }
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  uint32_t u32() { uint32_t v; raw(&v, sizeof v); return v; }
  int64_t i64() { int64_t v; raw(&v, sizeof v); return v; }
  std::vector<uint8_t> bytes() {
    const int64_t n = i64();
    if (n < 0 || size_t(n) > b_.size() - pos_) throw std::runtime_error("truncated result");
    std::vector<uint8_t> v(b_.begin() + long(pos_), b_.begin() + long(pos_ + size_t(n)));
    pos_ += size_t(n);
    return v;
  }
  std::string str() {
    const auto v = bytes();
    return std::string(v.begin(), v.end());
  }
  HostTensor tensor() {
    HostTensor t;
    t.dtype = DType(u32());
    t.rows = i64();
    t.cols = i64();
    t.bytes = bytes();
    return t;
  }
  Status status() {
    const uint32_t k = u32();
    if (k > uint32_t(kLastErrorKind)) throw std::runtime_error("bad error kind");
    Status s;
    s.kind = ErrorKind(k);
    s.message = str();
    return s;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  void raw(void* p, size_t n) {
    if (n > b_.size() - pos_) throw std::runtime_error("truncated result");
    std::memcpy(p, b_.data() + pos_, n);
    pos_ += n;
  }
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
};

// A request: run_case (kMagic) or a named task (kTaskMagic).
constexpr uint32_t kTaskMagic = 0x31544347;  // "GCT1"

struct Request {
  std::string task;  // empty: run_case
  std::string spec;
  Device device = Device::cpu;
  RunOptions opt;
  int64_t arg = 0;
  Case c;
};

std::vector<uint8_t> encode(const RunResult& r);
RunResult decode_run_result(const std::vector<uint8_t>& b);
std::vector<uint8_t> encode(const Status& s);
Status decode_status(const std::vector<uint8_t>& b);
std::vector<uint8_t> encode_request(const Implementation& impl, const Case& c, const RunOptions& opt);
std::vector<uint8_t> encode_task_request(const std::string& task, const Implementation& impl, const Case& c,
                                         int64_t arg);
Request decode_request(const std::vector<uint8_t>& b);
// A kept child's reply: the task's Status, and whether the child may serve
// another request.
std::vector<uint8_t> encode_reply(const Status& s, bool usable);
Status decode_reply(const std::vector<uint8_t>& b, bool* usable);

}  // namespace gatecheck::isolate_detail
