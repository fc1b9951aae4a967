// gatecheck ops: every op as the catalogs describe it (kernels/op_schema.h,
// harness/impls/implementation.h, properties/catalog/property_catalog.h).
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "../oracles/op_oracles.h"
#include "../properties/catalog/contract.h"
#include "cli.h"

namespace gatecheck {

namespace {

std::string shape_text(Role r) {
  switch (r) {
    case Role::row: return "[rows, dim]";
    case Role::table: return "[gates, dim]";
    case Role::column: return "[dim]";
    case Role::index: return "[rows] int64";
  }
  return "?";
}

void print_op(std::ostream& os, const OpSchema& op) {
  os << op.name << ": " << op.summary << "\n";
  os << "  inputs, in order (a plugin's descriptors, a Python target's arguments):\n";
  for (const auto& in : op.inputs) {
    std::ostringstream what;
    what << pass_name(in.pass);
    if (in.grad_of) what << ", the gradient of " << in.grad_of;
    if (in.pass == Pass::forward && !in.in_backward) what << " (the backward does not read it)";
    os << "    " << std::left << std::setw(10) << in.name << std::setw(8) << role_name(in.role) << std::setw(16)
       << shape_text(in.role) << what.str() << "\n";
  }
  os << "  outputs, in order:\n";
  for (const auto& out : op.outputs) {
    std::ostringstream what;
    what << pass_name(out.pass) << ", " << output_kind_name(out.kind);
    if (out.grad_of) what << ", the gradient of " << out.grad_of;
    os << "    " << std::left << std::setw(10) << out.name << std::setw(8) << role_name(out.role) << std::setw(16)
       << shape_text(out.role) << what.str() << "\n";
  }
  if (!op.scalars.empty()) {
    os << "  scalars:";
    for (const auto& s : op.scalars)
      os << " " << s.name << " (default " << s.default_value << (s.positive ? ", > 0 and finite" : ", finite") << ")";
    os << "\n";
  }
  if (op.min_dim_with_rows > 0) os << "  rows need dim >= " << op.min_dim_with_rows << "\n";
  if (!op.extra_value_classes.empty()) {
    os << "  its own value classes:";
    for (const auto& v : op.extra_value_classes) os << " " << v;
    os << "\n";
  }
  os << "  implementations:";
  for (const auto& b : builtin_implementations(op)) {
    std::string on;
    for (Device d : {Device::cpu, Device::cuda})
      if (b.devices & (1u << int(d))) on += std::string(on.empty() ? "" : ", ") + device_name(d);
    os << " " << b.name << " (" << on << "),";
  }
  os << " plugin:PATH, python:TARGET\n";
  const OpOracle* oracle = find_op_oracle(op);
  os << "  oracle: " << (oracle ? "float64 reference with per-element bounds" : "none") << "; eager model: "
     << (oracle && oracle->eager_model ? "yes" : "none");
  if (oracle && oracle->eager_model && *oracle->eager_scope) os << " (" << oracle->eager_scope << ")";
  os << "\n";
  os << "  properties (default set unless marked), with the outputs each compares:\n";
  for (const auto& p : property_catalog()) {
    os << "    " << std::left << std::setw(20) << p.name;
    if (!applies_to(p, op)) {
      os << "does not apply (no output of the kinds it reads)\n";
      continue;
    }
    std::string outs;
    for (int k : outputs_read(p, op)) outs += (outs.empty() ? "" : ", ") + std::string(op.outputs[size_t(k)].name);
    const char* what = p.reads == Reads::rejections ? "bad inputs"
                       : p.reads == Reads::inputs    ? "every input"
                       : p.reads == Reads::every_buffer ? "every buffer"
                                                        : nullptr;
    os << (what ? what : outs.c_str()) << (p.by_default ? "" : "  (opt-in)") << "\n";
  }
}

}  // namespace

int cmd_ops(const std::string& name) {
  if (!name.empty()) {
    const OpSchema* op = find_op_schema(name);
    if (!op) {
      std::fprintf(stderr, "gatecheck ops: %s\n", unknown_op(name).c_str());
      return kExitUsage;
    }
    print_op(std::cout, *op);
    return kExitOk;
  }
  bool first = true;
  for (const OpSchema* op : op_schemas()) {
    if (!first) std::cout << "\n";
    first = false;
    print_op(std::cout, *op);
  }
  return kExitOk;
}

}  // namespace gatecheck
