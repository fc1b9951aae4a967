// rmsnorm_modulate's kernel benchmark, behind `gatecheck-bench --op
// rmsnorm_modulate` and `gatecheck-rmsnorm-bench`: every combination of
// --rows, --dims, --gates (a number, or "rows": one gate per row) and --dtypes,
// each figure beside a copy of the same bytes and torch eager, in one run.
// argv[0] is the program name. Returns 0, 1 on a failed call, 2 on a usage
// error, 3 when there is no CUDA device.
#pragma once

namespace gatecheck {
int run_rmsnorm_bench(int argc, char** argv);
}
