// In-flight snapshots: before every call of an implementation, the case it is
// about to run is on disk, so that a crash, an exit() or a hang inside the
// call loses nothing and names the case. One file per worker of `check
// --jobs` (inflight-PID-W.snapshot in the corpus folder, W = 0 .. jobs-1),
// since the workers run cases at once; the next run converts the files of a
// run that died into readable corpus files.
#pragma once

#include <string>
#include <vector>

#include "../case/case.h"
#include "../case/scale_case.h"
#include "../findings/inflight_recovery.h"
#include "../properties/catalog/contract.h"

namespace gatecheck {

class InflightSnapshots {
 public:
  explicit InflightSnapshots(std::string corpus);
  ~InflightSnapshots();
  InflightSnapshots(const InflightSnapshots&) = delete;
  InflightSnapshots& operator=(const InflightSnapshots&) = delete;
  // CheckOptions::before_run: this worker's snapshot, its crash message and a
  // watchdog kick.
  void before_run(const Subject& impl, const std::string& property, const Case& c) const;
  // CheckOptions::before_scale_run: the same for a case of the scale tier
  // (its spec and view, as JSON).
  void before_scale_run(const Subject& impl, const std::string& property, const ScaleCase& c) const;
  // CheckOptions::after_run: the call is over, so this thread's crash message goes.
  void after_run() const;
  // Deletes every worker's snapshot (the run ended on its own).
  void remove_all(int workers) const;

 private:
  struct File {
    int fd = -1;
    size_t size = 0;
  };
  // Worker w's snapshot as its whole file; false if it could not be written.
  bool write(int worker, const std::string& bytes) const;
  std::string corpus_;
  // One per worker, each used by one thread at a time (check_workers.h).
  mutable std::vector<File> files_;
};

}  // namespace gatecheck
