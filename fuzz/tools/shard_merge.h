// gatecheck-fuzz-tools merge-shards: the bookkeeping half of
// `fuzz/nightly.sh --merge` (the script merges the corpora with libFuzzer's
// -merge=1 and then writes the report). Reads the campaign folders of a
// campaign's shares (or of whole campaigns) and writes into OUT what one
// campaign report needs (docs/nightly.md):
//   campaign.json    mode "merged": each share's status, workers, time, cases
//                    and exec/s, the shares missing, and the union of impls;
//   failures.jsonl   one record per failure signature (the first found, with
//                    "shards": every share that found it), "new" when OUT's
//                    known_signatures.txt did not hold it; its case file is
//                    copied to OUT/failures/ and the repro command follows it;
//                    a share that did not finish adds one "in-flight|I/N|file"
//                    record per crash input it had not yet replayed;
//   known_signatures.txt  gains the new signatures;
//   stats/           each share's per-class counts (the report sums them);
//   timeline.tsv     each share's summed exec/s and features on one time axis
//                    (seconds since each share's start).
#pragma once

#include <string>
#include <vector>

namespace gatecheck::fuzz {

// Prints three lines on stdout, "impls SPEC,SPEC...", the union of the
// shares' implementations, "status finished|incomplete" and "note WHY"
// (the shares missing or not finished), and a line per share on stderr. Returns 0, or 2 (with a message
// naming the folder) when a folder is not a campaign, two folders are the
// same share, or the shares belong to different campaigns (of different
// sizes, fuzz targets or seeds). With `check_only`, it
// stops after those checks, having written nothing (the merge asks before it
// moves the last report to history/).
int merge_shards(const std::string& out_dir, const std::vector<std::string>& shard_dirs, bool check_only = false);

}  // namespace gatecheck::fuzz
