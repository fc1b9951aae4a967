// scale_stress_probe: how often scheduling stress shows an order of float
// atomics that depends on scheduling (harness/scale_stress.h). For each trial
// it runs one scale case three times in a ScaleSession: a reference run, an
// unperturbed rerun and a rerun under a stress setting (cycling through a
// schedule), and counts the reruns whose grad_gate differs from the
// reference's bit for bit. Run on the atomic-order plugin it measures the
// stress; on a correct implementation both counts must be 0.
//
//   scale_stress_probe --impl SPEC --device cuda|cpu [--rows N --dim D --segment L --dtype f32 --trials T] [--json FILE]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "harness/scale/scale_session.h"
#include "properties/catalog/contract.h"

using namespace gatecheck;

int main(int argc, char** argv) {
  std::string impl_spec, device = "cuda", json, dtype = "f32";
  int64_t rows = 131072, dim = 256, segment = 65536, trials = 40;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--impl") impl_spec = v;
    else if (k == "--device") device = v;
    else if (k == "--rows") rows = std::stoll(v);
    else if (k == "--dim") dim = std::stoll(v);
    else if (k == "--segment") segment = std::stoll(v);
    else if (k == "--trials") trials = std::stoll(v);
    else if (k == "--dtype") dtype = v;
    else if (k == "--json") json = v;
    else {
      std::fprintf(stderr, "scale_stress_probe: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (impl_spec.empty() || (device != "cuda" && device != "cpu") || rows < 2 || dim < 1 || segment < 1 ||
      segment > rows || trials < 1) {
    std::fprintf(stderr, "usage: scale_stress_probe --impl SPEC --device cuda|cpu [--rows N --dim D --segment L "
                         "--dtype f32|f16|bf16 --trials T --json FILE]\n");
    return 2;
  }
  ScaleSpec s;
  if (!parse_dtype(dtype.c_str(), &s.dtype)) {
    std::fprintf(stderr, "scale_stress_probe: --dtype %s is not f32, f16 or bf16\n", dtype.c_str());
    return 2;
  }
  const Device d = device == "cuda" ? Device::cuda : Device::cpu;
  Subject impl;
  try {
    impl = make_subject(impl_spec, d);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scale_stress_probe: %s\n", e.what());
    return 3;
  }
  s.rows = rows;
  s.dim = dim;
  s.gates = 3;
  s.index_pattern = "long_segment";
  s.segment = segment;
  s.values = ScaleValues::cancelling;
  s.plan_kind = "partition";
  const auto schedule = stress_schedule(1, 9, stress_capacity(d));
  int64_t differ_plain = 0, differ_stressed = 0;
  std::vector<int64_t> by_setting(schedule.size(), 0), runs_by_setting(schedule.size(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < trials; ++t) {
    s.index_seed = uint64_t(t) * 2 + 1;
    s.value_seed = uint64_t(t) * 2 + 2;
    const ScaleCase c = make_scale_case(s);
    ScaleSession ses(impl, c, 2);
    const size_t k = 1 + size_t(t) % (schedule.size() - 1);
    if (!ses.run(0, nullptr).ok() || !ses.run(1, nullptr).ok()) return 3;
    differ_plain += !ses.compare(1, 0, c.op().output_index("grad_gate")).ok();
    if (!ses.run(1, nullptr, 0, schedule[k]).ok()) return 3;
    const bool d2 = !ses.compare(1, 0, c.op().output_index("grad_gate")).ok();
    differ_stressed += d2;
    by_setting[k] += d2;
    ++runs_by_setting[k];
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char line[512];
  std::snprintf(line, sizeof line,
                "%s@%s, %s %lld x %lld, a %lld-row segment, %lld trials in %.1f s: grad_gate differed from the "
                "reference in %lld unperturbed reruns and %lld reruns under stress\n",
                impl.name.c_str(), device.c_str(), dtype.c_str(), (long long)rows, (long long)dim, (long long)segment,
                (long long)trials, secs, (long long)differ_plain, (long long)differ_stressed);
  std::fputs(line, stdout);
  for (size_t k = 1; k < schedule.size(); ++k)
    std::printf("  %s: %lld of %lld\n", schedule[k].describe().c_str(), (long long)by_setting[k],
                (long long)runs_by_setting[k]);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"impl\": \"" << impl.name << "\", \"device\": \"" << device << "\", \"dtype\": \"" << dtype
        << "\", \"rows\": " << rows << ", \"dim\": " << dim << ", \"segment\": " << segment << ", \"trials\": " << trials
        << ", \"seconds\": " << secs << ", \"differ_unperturbed\": " << differ_plain
        << ", \"differ_stressed\": " << differ_stressed << ", \"by_setting\": [";
    for (size_t k = 1; k < schedule.size(); ++k)
      out << (k > 1 ? ", " : "") << "{\"setting\": \"" << schedule[k].describe() << "\", \"differ\": " << by_setting[k]
          << ", \"runs\": " << runs_by_setting[k] << "}";
    out << "]}\n";
  }
  return 0;
}
