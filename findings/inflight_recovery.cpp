#include "inflight_recovery.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "../case/case_json.h"
#include "../case/case_snapshot.h"
#include "failure_files.h"
#include "repro_command.h"

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
      const std::string digest = f.scale ? scale_digest(f.scale->spec, f.scale->view) : case_digest(f.c);
      const std::string out = f.failure ? failure_file_path(corpus, "crash-", f.failure->impl, f.failure->property, digest)
                                        : corpus + "/crash-" + digest + ".json";
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

}  // namespace gatecheck
