# Sourced by the Python door's Ctrl-C tests (kept_worker.sh,
# interrupt_while_loading.sh): a run signalled once it reaches the state the
# test is about, never after a fixed delay (docs/testing.md).

# start_in_group LOG CMD...: CMD in the background in a process group of its
# own (as a terminal runs a job), its output to LOG; its pid in $group_pid.
start_in_group() {
  local log=$1
  shift
  set -m
  "$@" >"$log" 2>&1 &
  group_pid=$!
  set +m
}

# interrupt_group_when FILE: once FILE has a line (60 s at most), SIGINT to
# the group (as a terminal's Ctrl-C sends it); the job's exit status in
# $group_rc. Returns 1, the group killed, if the job ended first or FILE
# stayed empty.
interrupt_group_when() {
  local file=$1 i
  for i in $(seq 600); do
    [ -s "$file" ] && break
    kill -0 "$group_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -s "$file" ] || ! kill -0 "$group_pid" 2>/dev/null; then
    kill -9 -- "-$group_pid" 2>/dev/null
    wait "$group_pid"
    group_rc=$?
    return 1
  fi
  kill -INT -- "-$group_pid"
  wait "$group_pid"
  group_rc=$?
}
