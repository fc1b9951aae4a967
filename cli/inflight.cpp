#include "inflight.h"
#include "../findings/repro_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "../case/case_json.h"
#include "../case/case_snapshot.h"
#include "../properties/engine/check_workers.h"
#include "cli.h"
#include "crash_guard.h"
#include "report.h"

namespace gatecheck {

InflightSnapshots::InflightSnapshots(std::string corpus)
    : corpus_(std::move(corpus)), files_(size_t(kCrashMessageSlots)) {}

InflightSnapshots::~InflightSnapshots() {
  for (File& f : files_)
    if (f.fd >= 0) ::close(f.fd);
}

// Rewritten in place, the file kept open: truncating it to nothing first
// made ext4 write it back at every close (its replace-by-truncate heuristic),
// a few milliseconds a case.
bool InflightSnapshots::write(int worker, const std::string& bytes) const {
  File& f = files_[size_t(std::min(std::max(worker, 0), kCrashMessageSlots - 1))];
  if (f.fd < 0) f.fd = ::open(inflight_path(corpus_, worker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (f.fd < 0) return false;
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::pwrite(f.fd, bytes.data() + off, bytes.size() - off, off_t(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  if (bytes.size() < f.size && ::ftruncate(f.fd, off_t(bytes.size())) != 0) return false;
  f.size = bytes.size();
  return true;
}

void InflightSnapshots::before_run(const Subject& impl, const std::string& property, const Case& c) const {
  const int worker = check_worker_index();
  const std::string path = inflight_path(corpus_, worker);
  const std::string repro = repro_command(path, impl.name, impl.device);
  CaseFile f{c, std::nullopt, {}, ""};
  f.failure = FailureRecord{impl.name, device_name(impl.device), property, "in flight", repro, true, ""};
  const bool saved = write(worker, case_to_snapshot(f));
  set_crash_message("  while " + impl.label() + " ran property " + property + " on " + describe(c) +
                    (saved ? "\n  the case is saved at " + path + "\n  repro: " + repro + "\n"
                           : "\n  (the case could not be saved: " + path + " is not writable)\n"));
}

void InflightSnapshots::before_scale_run(const Subject& impl, const std::string& property, const ScaleCase& c) const {
  const int worker = check_worker_index();
  const std::string path = inflight_path(corpus_, worker);
  const std::string repro = repro_command(path, impl.name, impl.device);
  CaseFile f;
  f.scale = ScaleFileCase{c.spec, c.view};
  f.failure = FailureRecord{impl.name, device_name(impl.device), property, "in flight", repro, true, ""};
  const bool saved = write(worker, case_to_json(f));
  set_crash_message("  while " + impl.label() + " ran property " + property + " at scale on " + describe(c) +
                    (saved ? "\n  the case is saved at " + path + "\n  repro: " + repro + "\n"
                           : "\n  (the case could not be saved: " + path + " is not writable)\n"));
}

void InflightSnapshots::after_run() const { set_crash_message(""); }

void InflightSnapshots::remove_all(int workers) const {
  for (int w = 0; w < workers; ++w) {
    File& f = files_[size_t(std::min(w, kCrashMessageSlots - 1))];
    if (f.fd >= 0) ::close(f.fd);
    f = File{};
    std::remove(inflight_path(corpus_, w).c_str());
  }
}

}  // namespace gatecheck
