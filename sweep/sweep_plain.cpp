#include "sweep_plain.h"

#include <stdexcept>

#include "../harness/run/batch_runner.h"
#include "../oracles/oracle.h"

#if GATECHECK_HAVE_TORCH
#include "../kernels/torch/torch_plain_op.h"
#endif

namespace gatecheck {

namespace {

const PlainPart& plain_part(const OpSchema& op) {
  if (!op.plain.field) throw std::invalid_argument(std::string(op.name) + " has no plain part (OpSchema::plain)");
  return op.plain;
}

int float_input_of(const OpSchema& op, const char* name) {
  const int k = op.float_input(name);
  if (k < 0)
    throw std::invalid_argument(std::string(op.name) + "'s plain part names '" + name + "', not one of its inputs (" +
                                op.input_list(Pass::backward) + ")");
  return k;
}

// The plain output as the op lays it out for c's shape.
HostTensor plain_output_for(const Case& c) {
  const char* name = plain_part(*c.op).output;
  const int k = c.op->output_index(name ? name : "");
  if (k < 0)
    throw std::invalid_argument(std::string(c.op->name) + "'s plain part names output '" + (name ? name : "") +
                                "', not one of its outputs (" + c.op->output_list() + ")");
  const OpOutput& o = c.op->outputs[size_t(k)];
  return HostTensor(c.dtype, role_rows(o.role, c.rows, c.gates), role_cols(o.role, c.dim));
}

}  // namespace

Case plain_case(const Case& c) {
  Case p = c;
  p.plan.reset();
  for (const auto& [name, value] : plain_part(*c.op).set) {
    HostTensor& t = p.inputs[size_t(float_input_of(*c.op, name))];
    const uint32_t bits = float_to_bits_rn(c.dtype, float(value));
    for (int64_t i = 0; i < t.numel(); ++i) t.set_bits(i, bits);
  }
  return p;
}

PlainReference libtorch_plain_reference(const Case& plain, Device d) {
  const PlainPart& pp = plain_part(*plain.op);
  PlainReference r;
#if GATECHECK_HAVE_TORCH
  r.by = torch_plain_op_name(pp.library_op) + " on " + device_name(d);
  r.unavailable = torch_plain_op_missing(pp.library_op);
  if (!r.unavailable.empty()) return r;
  std::vector<PlainTensor> args;
  for (const char* name : pp.args) {
    const HostTensor& t = plain.inputs[size_t(float_input_of(*plain.op, name))];
    args.push_back({t.data(), t.rows, t.cols});
  }
  std::vector<double> scalars;
  for (const char* name : pp.scalar_args) {
    const int k = plain.op->scalar_index(name);
    if (k < 0) throw std::invalid_argument(std::string(plain.op->name) + "'s plain part names no scalar '" + name + "'");
    scalars.push_back(plain.scalars[size_t(k)]);
  }
  r.out = plain_output_for(plain);
  const Status s = torch_plain_op(pp.library_op, plain.dtype, d, args, scalars, r.out.data());
  if (!s.ok()) {
    r.unavailable = s.message;
    r.out = HostTensor();
  }
#else
  (void)d;
  r.by = pp.library_name;
  r.unavailable = "this gatecheck was built without LibTorch";
#endif
  return r;
}

HostTensor plain_output(const Implementation& impl, const Case& plain) {
  BatchRunner r(impl, plain, 1);
  const Status s = r.run_full_forward();
  if (!s.ok()) throw std::runtime_error(s.message);
  HostTensor out = plain_output_for(plain);
  read_bytes(impl.device, out.data(), r.full(r.output(plain_part(*plain.op).output)), out.bytes.size());
  return out;
}

PlainAt compare_plain(const HostTensor& got, const HostTensor& want) {
  const Comparison c = compare_bitwise("plain", got, want, /*nan_any=*/true);
  PlainAt a;
  a.rows = got.rows;
  a.elements = c.checked;
  a.differ = c.failed;
  if (!c.first.empty()) {
    const Mismatch& m = c.first.front();
    a.at_row = m.row;
    a.at_col = m.col;
    a.bits = m.got_bits;
    a.want_bits = m.want_bits;
    a.why = m.why;
  }
  return a;
}

}  // namespace gatecheck
