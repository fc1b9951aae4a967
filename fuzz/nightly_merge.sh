# shellcheck shell=bash disable=SC2154  # (sourced: nightly.sh sets the variables)
# `fuzz/nightly.sh --merge DIR... [--out OUT]`, sourced by fuzz/nightly.sh
# (which has parsed the options into merge_dirs, out, impls, build, no_build
# and defines say, bad, use_out_folder, build_fuzzers, check_impls,
# move_to_history and merge_corpus). docs/nightly.md has the whole story.
#
# Each DIR is a share's folder (DIR/shards/I of a `--shard I/N` campaign) or a
# whole campaign's; a DIR that holds shards/ stands for all of its shares, and
# when it is the only one given and there is no --out, it is the merge's OUT.
# In OUT: the corpora merged with libFuzzer's -merge=1 into OUT/corpus (the
# previous OUT/corpus included: it is what the shares read), the failures
# de-duplicated by signature, one report, the previous one moved to history/.
# Exit: 0 no new failure, 1 new failure(s), 2 usage, 3 a share missing or
# not finished (status "incomplete": the report covers what there was),
# 130/143/129 a signal stopped the corpus merge (the corpus kept as it was).

merge_shards() {
  local d s found parts=() gathered impl_list status note rc corpora=() newf
  # --- the folders, checked before the build --------------------------------
  for d in "${merge_dirs[@]}"; do
    if [ -d "$d/shards" ]; then
      found=0
      for s in "$d"/shards/*/; do
        [ -f "$s/campaign.json" ] || continue
        parts+=("${s%/}"); found=$((found + 1))
      done
      [ $found -gt 0 ] || bad "--merge '$d': its shards/ holds no share with a campaign.json (did any share run?)"
      if [ -z "$out" ] && [ ${#merge_dirs[@]} -eq 1 ]; then out=$d; fi
    elif [ -f "$d/campaign.json" ]; then
      parts+=("$d")
    elif [ -e "$d" ]; then
      bad "--merge '$d': not a campaign folder (no campaign.json) nor one holding shards/"
    else
      bad "--merge '$d': no such folder"
    fi
  done
  [ -n "$out" ] || bad "--merge: give --out OUT (where the merged corpus and report go); only a single campaign" \
                       "folder holding shards/ is merged into itself"
  # An --out this merge makes is taken away again if the merge is refused before it writes
  # anything there (another campaign's shares, a build that fails).
  local made_out=""
  [ -e "$out" ] || made_out=yes
  use_out_folder
  [ -n "$made_out" ] && trap 'rm -f "$out/.merge.lock"; rmdir "$out" 2>/dev/null' EXIT
  # OUT's own report may be a merged one (the last night's), never a campaign's.
  if [ -f "$out/campaign.json" ] && ! grep -q '"mode": "merged"' "$out/campaign.json"; then
    bad "--out '$out' holds a campaign of its own (its campaign.json is not a merge's); merge into another folder"
  fi

  # The shares' fuzz target (their op's), which the corpus merge must run: the tools refuse
  # shares of different targets below.
  local ran
  ran=$(sed -n 's/.*"fuzzer": "\([^"]*\)".*/\1/p' "${parts[0]}/campaign.json")
  [ -n "$ran" ] && fuzzer=${ran##*/}

  # --- build, check the shares are one campaign's, then gather them ----------
  build_fuzzers
  exec 9>"$out/.merge.lock"
  flock -n 9 || { say "--out '$out': another merge is running there"; exit 2; }
  "$tools" merge-shards --check "$out" "${parts[@]}" || exit 2  # (before the last report moves)
  trap - EXIT  # from here on OUT holds the merge
  [ -f "$out/campaign.json" ] && { move_to_history "$out"; say "the previous merge's report moved to $prev"; }
  mkdir -p "$out"/{corpus,logs} && touch "$out/known_signatures.txt"
  gathered=$("$tools" merge-shards "$out" "${parts[@]}")
  rc=$?
  [ $rc -eq 0 ] || exit $rc
  impl_list=$(sed -n 's/^impls //p' <<<"$gathered")
  status=$(sed -n 's/^status //p' <<<"$gathered")
  note=$(sed -n 's/^note //p' <<<"$gathered")
  # The corpus merge runs each input on the shares' implementations (or --impl):
  # an input keeps its place for the features it gives on any of them.
  if [ ${#impls[@]} -gt 0 ]; then impl_list=$(IFS=,; echo "${impls[*]}"); fi
  export GATECHECK_FUZZ_IMPL=${impl_list:-host}
  check_impls 0
  for d in "${parts[@]}"; do [ -d "$d/corpus" ] && corpora+=("$d/corpus"); done
  trap_signals  # a signal stops the corpus merge; the report is still written
  local merged
  if merge_corpus "$out/corpus" "$out/logs/merge.log" "$out/known_signatures.txt" "$out/corpus" "${corpora[@]}"; then
    merged=$(grep -a -m1 'MERGE-OUTER: .* new files' "$out/logs/merge.log" | sed 's/^MERGE-OUTER: //')
    say "${merged:-no input to merge: the corpora are empty} (corpus: $(ls "$out/corpus" | wc -l) inputs)"
  fi
  if [ -n "$interrupted" ]; then  # the merged campaign's status (its top level's) says so, not the shares'
    sed -i -e 's/^ "status": "[a-z]*"/ "status": "interrupted"/' \
      -e "s/^ \"note\": \"/ \"note\": \"stopped by SIG$interrupted during the corpus merge (the corpus is not merged)${note:+; }/" \
      "$out/campaign.json"
  fi
  "$tools" report "$out" >&2

  # --- exit code ----------------------------------------------------------
  newf=$(grep -c '"new":true' "$out/failures.jsonl")
  if [ -n "$interrupted" ]; then
    say "interrupted; the shares' failures are gathered ($newf new), the corpus is not merged; report $out/report.md"
    exit_interrupted
  fi
  if [ "$newf" -gt 0 ]; then
    say "$newf new failure(s) over ${#parts[@]} share(s); cases under $out/failures, report $out/report.md"
    exit 1
  fi
  if [ "$status" != finished ]; then
    say "not a complete campaign: $note; report $out/report.md"
    exit 3
  fi
  say "no new failures over ${#parts[@]} share(s); report $out/report.md"
  exit 0
}
