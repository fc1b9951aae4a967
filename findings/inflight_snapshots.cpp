#include "inflight_snapshots.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "../case/case_json.h"
#include "../case/case_snapshot.h"
#include "../properties/engine/check_workers.h"
#include "inflight_recovery.h"
#include "repro_command.h"

namespace gatecheck {

InflightSnapshots::InflightSnapshots(std::string corpus, int workers, CrashMessageSink crash_message)
    : corpus_(std::move(corpus)), crash_message_(std::move(crash_message)), files_(size_t(std::max(workers, 1))) {}

InflightSnapshots::~InflightSnapshots() {
  for (File& f : files_)
    if (f.fd >= 0) ::close(f.fd);
}

int InflightSnapshots::slot(int worker) const { return std::min(std::max(worker, 0), int(files_.size()) - 1); }

// Rewritten in place, the file kept open: truncating it to nothing first
// made ext4 write it back at every close (its replace-by-truncate heuristic),
// a few milliseconds a case.
bool InflightSnapshots::write(int worker, const std::string& bytes) const {
  File& f = files_[size_t(slot(worker))];
  if (f.fd < 0) f.fd = ::open(inflight_path(corpus_, slot(worker)).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
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

void InflightSnapshots::put(const Subject& impl, const std::string& property, CaseFile f,
                            const std::string& what) const {
  const int worker = slot(check_worker_index());
  const std::string path = inflight_path(corpus_, worker);
  const std::string repro = repro_command(path, impl.name, impl.device);
  f.failure = FailureRecord{impl.name, device_name(impl.device), property, "in flight", repro, true, ""};
  // A scale case as JSON (its spec and view); a small one in the snapshot format.
  const bool saved = write(worker, f.scale ? case_to_json(f) : case_to_snapshot(f));
  if (crash_message_)
    crash_message_("  while " + impl.label() + " ran property " + property + " " + what +
                   (saved ? "\n  the case is saved at " + path + "\n  repro: " + repro + "\n"
                          : "\n  (the case could not be saved: " + path + " is not writable)\n"));
}

void InflightSnapshots::before_run(const Subject& impl, const std::string& property, const Case& c) const {
  CaseFile f;
  f.c = c;
  put(impl, property, std::move(f), "on " + describe(c));
}

void InflightSnapshots::before_scale_run(const Subject& impl, const std::string& property, const ScaleCase& c) const {
  CaseFile f;
  f.scale = ScaleFileCase{c.spec, c.view};
  put(impl, property, std::move(f), "at scale on " + describe(c));
}

void InflightSnapshots::after_run() const {
  if (crash_message_) crash_message_("");
}

void InflightSnapshots::attach(CheckOptions* opt) const {
  opt->before_run = [this](const Subject& impl, const std::string& property, const Case& c) {
    before_run(impl, property, c);
  };
  opt->after_run = [this] { after_run(); };
  opt->before_scale_run = [this](const Subject& impl, const std::string& property, const ScaleCase& c) {
    before_scale_run(impl, property, c);
  };
}

void InflightSnapshots::remove_all() const {
  for (size_t w = 0; w < files_.size(); ++w) {
    File& f = files_[w];
    if (f.fd >= 0) ::close(f.fd);
    f = File{};
    std::remove(inflight_path(corpus_, int(w)).c_str());
  }
}

}  // namespace gatecheck
