// A scale case's scalars (scale_case.h), drawn as a small case's are
// (value_classes.cpp's draw_scalars): the default half the time, else a
// typical value or one near the mean square of a row of the input it is added
// to, recomputed from the row's positions. Rounded to fp32.
#include <cmath>

#include "prng.h"
#include "scale_case.h"

namespace gatecheck {

void draw_scale_scalars(ScaleSpec* s, Prng& rng) {
  const OpSchema& op = *s->op;
  s->scalars.assign(op.scalars.size(), 0);
  for (size_t i = 0; i < op.scalars.size(); ++i) {
    const OpScalar& sc = op.scalars[i];
    double v = sc.default_value;
    const int from = op.float_input(sc.relative_to ? sc.relative_to : "");
    const uint64_t pick = rng.below(4);
    if (pick == 1 && !sc.typical.empty()) {
      v = sc.typical[size_t(rng.below(uint64_t(sc.typical.size())))];
    } else if (pick >= 2 && from >= 0 && s->rows > 0 && s->dim > 0) {
      const uint64_t r = rng.below(uint64_t(s->rows));
      const ValueRule rule = s->rule();
      double ms = 0;
      for (int64_t j = 0; j < s->dim; ++j) {
        const uint32_t b = scale_bits(s->dtype, rule, scale_tensor_of_input(size_t(from)), r * uint64_t(s->dim) + uint64_t(j));
        const double x = bits_to_float(s->dtype, b);
        ms += x * x;
      }
      ms /= double(s->dim);
      const double near = std::ldexp(ms, int(rng.range(-2, 2)));
      if (std::isfinite(near) && near > 0) v = near;
    }
    v = double(float(v));
    if (!std::isfinite(v) || (sc.positive && !(v > 0))) v = sc.default_value;
    s->scalars[i] = v;
  }
}

}  // namespace gatecheck
