// In-flight snapshots (findings/inflight_snapshots.h): the case is on disk
// before the call with a crash message naming it; the call's end clears the
// message; a run's end removes the files; and a snapshot left by a process
// that died becomes crash-IMPL-PROPERTY-DIGEST.json with its repro line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "case/case_json.h"
#include "case/case_spec.h"
#include "findings/failure_files.h"
#include "findings/inflight_recovery.h"
#include "findings/inflight_snapshots.h"
#include "findings/repro_command.h"

namespace gatecheck {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/gatecheck-findings-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
};

Case small_case() {
  CaseSpec s;
  s.dtype = DType::f32;
  s.rows = 3;
  s.dim = 4;
  s.gates = 2;
  return make_case_from_spec(s);
}

// The pid of a process that has ended (and been reaped).
long dead_pid() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return long(p);
}

TEST(InflightSnapshots, TheCaseIsOnDiskBeforeTheCallAndGoneAfterTheRun) {
  TempDir dir;
  std::string message = "unset";
  const Subject impl = make_subject("host", Device::cpu);
  const Case c = small_case();
  {
    const InflightSnapshots inflight(dir.path, 2, [&](const std::string& m) { message = m; });
    inflight.before_run(impl, "accuracy", c);
    const std::string path = inflight_path(dir.path, 0);
    ASSERT_TRUE(fs::exists(path));
    const CaseFile f = read_case_file(path);
    EXPECT_EQ(case_digest(f.c), case_digest(c));  // the case, bit for bit
    ASSERT_TRUE(f.failure);
    EXPECT_EQ(f.failure->property, "accuracy");
    EXPECT_EQ(f.failure->repro, repro_command(path, "host", Device::cpu));
    EXPECT_NE(message.find("the case is saved at " + path), std::string::npos) << message;
    EXPECT_NE(message.find("repro: " + f.failure->repro), std::string::npos) << message;
    inflight.after_run();
    EXPECT_EQ(message, "");
    inflight.remove_all();
    EXPECT_FALSE(fs::exists(path));
  }
}

TEST(InflightSnapshots, AnUnwritableFolderIsNamedInTheMessage) {
  std::string message;
  const InflightSnapshots inflight("/nonexistent-gatecheck-folder", 1, [&](const std::string& m) { message = m; });
  inflight.before_run(make_subject("host", Device::cpu), "accuracy", small_case());
  EXPECT_NE(message.find("could not be saved"), std::string::npos) << message;
}

TEST(InflightSnapshots, AttachSetsTheRunsHooks) {
  TempDir dir;
  const InflightSnapshots inflight(dir.path, 1, nullptr);
  CheckOptions opt;
  inflight.attach(&opt);
  ASSERT_TRUE(opt.before_run && opt.after_run && opt.before_scale_run);
  opt.before_run(make_subject("host", Device::cpu), "accuracy", small_case());
  EXPECT_TRUE(fs::exists(inflight_path(dir.path, 0)));
  inflight.remove_all();
}

TEST(InflightRecovery, ASnapshotOfADeadRunBecomesACrashFileWithItsRepro) {
  TempDir dir;
  const Case c = small_case();
  {
    const InflightSnapshots died(dir.path, 1, nullptr);
    died.before_run(make_subject("host", Device::cpu), "accuracy", c);
  }
  // As if the process that wrote it had died: its pid is one no process has.
  const std::string dead = dir.path + "/inflight-" + std::to_string(dead_pid()) + "-0.snapshot";
  fs::rename(inflight_path(dir.path, 0), dead);
  // A snapshot of a live process (this one) is left alone.
  const InflightSnapshots inflight(dir.path, 1, nullptr);
  inflight.before_run(make_subject("host", Device::cpu), "accuracy", c);
  recover_inflight(dir.path);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(inflight_path(dir.path, 0)));
  const std::string out = failure_file_path(dir.path, "crash-", "host", "accuracy", case_digest(c));
  ASSERT_TRUE(fs::exists(out)) << out;
  const CaseFile f = read_case_file(out);
  EXPECT_EQ(case_digest(f.c), case_digest(c));
  ASSERT_TRUE(f.failure);
  EXPECT_EQ(f.failure->repro, repro_command(out, "host", Device::cpu));
  EXPECT_NE(f.failure->message.find("the process died"), std::string::npos);
  inflight.remove_all();
}

}  // namespace
}  // namespace gatecheck
