// In-flight snapshots left by runs that died. Before every call, a front end
// puts the case it is about to run on disk (inflight-PID-W.snapshot in the
// corpus folder, one file per worker W); a crash, an exit() or a hang inside
// the call then loses nothing. The next run turns the files of a run that
// died into readable corpus files with their repro lines.
#pragma once

#include <string>

namespace gatecheck {

// The snapshot of worker `worker` of this process.
std::string inflight_path(const std::string& corpus, int worker);

// Is `name` an in-flight snapshot's file name; *pid its process (0 for the
// oldest form, which names none).
bool is_inflight_name(const std::string& name, long* pid);

// Snapshots left by runs that died (inflight-PID-W.snapshot, and the older
// inflight-PID.snapshot and inflight-case.snapshot): each becomes
// crash-<impl>-<property>-<digest>.json with its repro command. A snapshot
// whose process still lives is left alone, so runs may share a corpus folder.
void recover_inflight(const std::string& corpus);

}  // namespace gatecheck
