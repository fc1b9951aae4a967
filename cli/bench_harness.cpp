// `gatecheck bench --harness`: the property harness's throughput, with the
// in-flight snapshot before every call that `check` writes (in a folder of
// its own, removed afterwards), so that its figures are check's.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "../findings/inflight_snapshots.h"
#include "../properties/engine/check_workers.h"
#include "../properties/engine/harness_bench.h"
#include "cli.h"
#include "crash_guard.h"

namespace gatecheck {

int harness_bench_with_snapshots(const std::vector<Subject>& impls, HarnessBenchOptions o, const std::string& json) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/gatecheck-bench-XXXXXX";
  if (!mkdtemp(dir.data())) {
    std::fprintf(stderr, "gatecheck bench: cannot make a folder for the in-flight snapshots (%s)\n", dir.c_str());
    return kExitCannotRun;
  }
  const int workers = o.jobs > 0 ? o.jobs : default_check_jobs();
  const InflightSnapshots inflight(dir, workers, set_crash_message);
  o.before_run = [&](const Subject& impl, const std::string& property, const Case& c) {
    inflight.before_run(impl, property, c);
  };
  o.after_run = [&] { inflight.after_run(); };
  const int rc = run_harness_bench(impls, o, std::cout, json);
  clear_crash_messages();
  inflight.remove_all();
  ::rmdir(dir.c_str());
  return rc;
}

}  // namespace gatecheck
