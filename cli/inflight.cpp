#include "inflight.h"
#include "../findings/repro_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
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

std::string inflight_path(const std::string& corpus, int worker) {
  return corpus + "/inflight-" + std::to_string(getpid()) + "-" + std::to_string(worker) + ".snapshot";
}

bool is_inflight_name(const std::string& name, long* pid) {
  *pid = 0;
  if (name == "inflight-case.snapshot") return true;  // older gatecheck
  const std::string head = "inflight-", tail = ".snapshot";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  // PID or PID-WORKER, digits only
  const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
  const size_t dash = mid.find('-');
  auto digits = [](const std::string& s) { return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos; };
  const std::string p = mid.substr(0, dash);
  if (!digits(p) || (dash != std::string::npos && !digits(mid.substr(dash + 1)))) return false;
  *pid = std::stol(p);
  return *pid > 0;
}

void recover_inflight(const std::string& corpus) {
  DIR* dir = opendir(corpus.c_str());
  if (!dir) return;
  std::vector<std::string> found;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    long pid = 0;
    if (!is_inflight_name(name, &pid)) continue;
    if (pid == 0 || !(::kill(pid_t(pid), 0) == 0 || errno == EPERM)) found.push_back(name);
  }
  closedir(dir);
  for (const auto& name : found) {
    const std::string inflight = corpus + "/" + name;
    try {
      CaseFile f = read_case_file(inflight);
      const std::string who = f.failure ? file_safe(f.failure->impl) + "-" + f.failure->property + "-" : "";
      const std::string digest = f.scale ? scale_digest(f.scale->spec, f.scale->view) : case_digest(f.c);
      const std::string out = corpus + "/crash-" + who + digest + ".json";
      if (f.failure) {
        f.failure->message = "the process died while running this case (recovered snapshot)";
        f.failure->repro = repro_command(out, f.failure->impl, f.failure->device == "cuda" ? Device::cuda : Device::cpu);
      }
      write_case_file(out, f);
      std::fprintf(stderr, "gatecheck: an earlier run died mid-case; its case is recovered as %s\n", out.c_str());
      if (f.failure) std::fprintf(stderr, "  repro: %s\n", f.failure->repro.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gatecheck: could not recover %s: %s\n", inflight.c_str(), e.what());
      continue;  // kept, for a person to look at
    }
    std::remove(inflight.c_str());
  }
}

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
