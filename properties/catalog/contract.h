// What an implementation claims, and the implementation held to it.
//
// A Contract lists the claimed properties (property_catalog.h names them),
// each as "property" (every output) or "property:output" (e.g.
// "accuracy:grad_gate"), exceptions that withdraw a claim for some dtypes
// with the reason shown in reports, and the inputs it counts as valid
// (valid_inputs.h). A Subject is an implementation under test together with
// the contract it is held to.
#pragma once

#include <string>
#include <vector>

#include "../../harness/impls/implementation.h"
#include "property_catalog.h"
#include "valid_inputs.h"

namespace gatecheck {

struct Contract {
  const OpSchema* op = &gate_residual_schema();  // the op whose outputs it claims
  std::vector<std::string> claims;
  struct Exception {
    std::string claim;           // "accuracy:grad_gate", "repeatable", ...
    std::vector<DType> dtypes;   // empty: every dtype
    std::string reason;
  };
  std::vector<Exception> exceptions;
  ValidInputs valid;  // every input of the op contract unless narrowed

  // Is (property, output) claimed for dtype t? output "" means the property as a whole.
  bool claims_for(const std::string& property, const std::string& output, DType t) const;
  // Is any part of the property claimed for t: the whole, or one output of it?
  bool claims_any_part(const std::string& property, DType t) const;
  // "default set; not accuracy:grad_gate for bf16,f16 (...); valid rows>=1".
  // parse() reads it back.
  std::string describe() const;
  // The default property set, no exceptions.
  static Contract everything(const OpSchema& op = gate_residual_schema());
  // Parses a contract (--claims, a Python implementation's gatecheck_claims):
  // parts separated by ';', each one of
  //   claims     comma-separated: "default" (or "default set", the default
  //              property set), a property, or property:output; "+" may join
  //              them as describe() does ("default set + eager_exact")
  //   not CLAIM [for DTYPES] [(REASON)]   withdraws CLAIM for those dtypes
  //              (comma-separated bf16, f16, f32; all when omitted)
  //   valid BOUNDS   the valid inputs (ValidInputs::parse: "rows>=1,dim>=1")
  // Bounds may also stand in the claims list ("default,rows>=1"). A contract
  // that names no property claims the default set, so "valid dim>=1" narrows
  // the inputs alone. `what` leads every error message ("--claims: unknown
  // property 'x' ..."); throws std::invalid_argument naming the bad part.
  // An output named in a claim must be one of op's.
  static Contract parse(const std::string& text, const std::string& what = "--claims",
                        const OpSchema& op = gate_residual_schema());
};

// The contract an implementation is known to keep: what it declares for
// itself (Implementation::declared_claims: a Python implementation's
// gatecheck_claims, a built-in's documented weaknesses), else the default
// set. Throws std::invalid_argument for a declaration that does not parse.
Contract known_contract(const Implementation& impl);

// A run's overrides of a known contract of an implementation of op:
// `claims` (--claims, "" for none) replaces it whole; `valid` (--valid, ""
// for none) narrows its valid inputs further. Throws std::invalid_argument
// naming the bad item.
Contract override_contract(const Contract& known, const std::string& claims, const std::string& valid,
                           const OpSchema& op = gate_residual_schema());

struct Subject : Implementation {
  Contract contract;
};

// An implementation held to its known contract.
Subject subject_of(Implementation impl);
// make_implementation / available_implementations (harness/impls/implementation.h),
// each held to its known contract.
Subject make_subject(const std::string& spec, Device device, const OpSchema& op = gate_residual_schema());
std::vector<Subject> available_subjects(const std::string& device_filter, const OpSchema& op = gate_residual_schema());

}  // namespace gatecheck
