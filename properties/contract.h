// What an implementation claims, and the implementation held to it.
//
// The property catalog: the names every layer above uses (--properties,
// --claims, reports, corpus files). A Contract lists the claimed properties,
// each as "property" (every output) or "property:output" (e.g.
// "accuracy:grad_gate"), and exceptions that withdraw a claim for some
// dtypes with the reason shown in reports. A Subject is an implementation
// under test together with the contract it is held to.
#pragma once

#include <string>
#include <vector>

#include "../harness/implementation.h"

namespace gatecheck {

// The default property set, in report order; all_properties() adds the
// opt-in ones (eager_exact).
const std::vector<std::string>& default_properties();
const std::vector<std::string>& all_properties();
bool is_property(const std::string& p);
// "unknown property 'p' (accuracy, row_invariance, ...)": every message about a
// bad property name lists the valid ones.
std::string unknown_property(const std::string& p);

struct Contract {
  std::vector<std::string> claims;
  struct Exception {
    std::string claim;           // "accuracy:grad_gate", "repeatable", ...
    std::vector<DType> dtypes;   // empty: every dtype
    std::string reason;
  };
  std::vector<Exception> exceptions;

  // Is (property, output) claimed for dtype t? output "" means the property as a whole.
  bool claims_for(const std::string& property, const std::string& output, DType t) const;
  std::string describe() const;  // "default set; not accuracy:grad_gate for bf16,f16 (...)"
  static Contract everything();  // the default property set, no exceptions
  // Parse "--claims" lists: comma-separated claims; throws std::invalid_argument
  // naming the bad item.
  static Contract parse(const std::string& list);
};

// The contract an implementation is known to keep: the default set, less
// torch eager's documented weaknesses on each device.
Contract known_contract(const Implementation& impl);

struct Subject : Implementation {
  Contract contract;
};

// An implementation held to its known contract.
Subject subject_of(Implementation impl);
// make_implementation / available_implementations (harness/implementation.h),
// each held to its known contract.
Subject make_subject(const std::string& spec, Device device);
std::vector<Subject> available_subjects(const std::string& device_filter);

}  // namespace gatecheck
