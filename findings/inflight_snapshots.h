// In-flight snapshots: before every call of an implementation, the case it is
// about to run is on disk, so that a crash, an exit() or a hang inside the
// call loses nothing and names the case. One file per worker of `check
// --jobs` (inflight-PID-W.snapshot in the corpus folder, W = 0 .. jobs-1),
// since the workers run cases at once; the next run converts the files of a
// run that died into readable corpus files (inflight_recovery.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../case/case.h"
#include "../case/case_json.h"
#include "../case/scale_case.h"
#include "../properties/catalog/contract.h"
#include "../properties/engine/check_engine.h"

namespace gatecheck {

// What a front end prints if the process dies during the call ("" once the
// call is over): the case's file and its repro line. The CLI's crash guard
// takes it; a front end with none may ignore it.
using CrashMessageSink = std::function<void(const std::string& message)>;

class InflightSnapshots {
 public:
  // Snapshots in `corpus` for `workers` workers (check_worker_index() below it).
  InflightSnapshots(std::string corpus, int workers, CrashMessageSink crash_message);
  ~InflightSnapshots();
  InflightSnapshots(const InflightSnapshots&) = delete;
  InflightSnapshots& operator=(const InflightSnapshots&) = delete;
  // CheckOptions::before_run: this worker's snapshot and its crash message.
  void before_run(const Subject& impl, const std::string& property, const Case& c) const;
  // CheckOptions::before_scale_run: the same for a case of the scale tier
  // (its spec and view, as JSON).
  void before_scale_run(const Subject& impl, const std::string& property, const ScaleCase& c) const;
  // CheckOptions::after_run: the call is over, so this thread's crash message goes.
  void after_run() const;
  // Sets opt's before_run, before_scale_run and after_run to the three above
  // (the snapshots must outlive the run).
  void attach(CheckOptions* opt) const;
  // Deletes every worker's snapshot (the run ended on its own).
  void remove_all() const;

 private:
  struct File {
    int fd = -1;
    size_t size = 0;
  };
  // Worker w's snapshot as its whole file; false if it could not be written.
  bool write(int worker, const std::string& bytes) const;
  // f with its in-flight record as this worker's snapshot, and the crash
  // message: "while IMPL ran property P WHAT" and where the case is.
  void put(const Subject& impl, const std::string& property, CaseFile f, const std::string& what) const;
  int slot(int worker) const;
  std::string corpus_;
  CrashMessageSink crash_message_;
  // One per worker, each used by one thread at a time (check_workers.h).
  mutable std::vector<File> files_;
};

}  // namespace gatecheck
