// The rows of a comparison (sweep_compare.h): one field's value on each side,
// verdicts marked where they differ. Internal to sweep_compare*.cpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gatecheck::compare_detail {

using nlohmann::json;

// The prior art's stand-in for an accuracy bound (PRIOR_ART.md).
constexpr double kPriorArtThreshold = 5e-3;

struct Fields {
  json rows = json::array();
  int verdicts_differ = 0;

  // A verdict (true/false) on both sides: marked when they differ.
  void verdict(const std::string& name, const json* a, const json* b) {
    json f = {{"field", name}, {"kind", "verdict"}};
    f["ours"] = a ? *a : json(nullptr);
    f["theirs"] = b ? *b : json(nullptr);
    f["differs"] = a && b && *a != *b;
    verdicts_differ += f["differs"].get<bool>();
    rows.push_back(f);
  }
  // A number on both sides, with theirs / ours.
  void value(const std::string& name, const json* a, const json* b) {
    json f = {{"field", name}, {"kind", "number"}};
    f["ours"] = a ? *a : json(nullptr);
    f["theirs"] = b ? *b : json(nullptr);
    if (a && b && a->is_number() && b->is_number() && a->get<double>() != 0)
      f["theirs_over_ours"] = b->get<double>() / a->get<double>();
    rows.push_back(f);
  }
  // A count, and the verdict it implies (zero differences or not).
  void count(const std::string& name, const json* a, const json* b) {
    value(name, a, b);
    if (!(a && b && a->is_number() && b->is_number())) return;
    const json za = a->get<double>() == 0, zb = b->get<double>() == 0;
    verdict(name + " == 0", &za, &zb);
  }
  // An error, and whether it is under the prior art's 5e-3.
  void error(const std::string& name, const json* a, const json* b) {
    value(name, a, b);
    if (!(a && b && a->is_number() && b->is_number())) return;
    const json ua = a->get<double>() < kPriorArtThreshold, ub = b->get<double>() < kPriorArtThreshold;
    verdict(name + " < 5e-3 (the prior art's threshold)", &ua, &ub);
  }
};

}  // namespace gatecheck::compare_detail
