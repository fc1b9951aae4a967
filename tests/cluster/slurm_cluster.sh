#!/usr/bin/env bash
# A single-node Slurm cluster for the tests, on this machine, run as root
# without systemd:
#   tests/cluster/slurm_cluster.sh DIR COMMAND [ARG...]
# installs slurm-wlm and munge (apt) if they are missing, writes DIR/slurm.conf
# for this host (its cores from nproc, its memory from /proc/meminfo), starts
# munged (its own key and socket in DIR), slurmctld and slurmd with that
# configuration, waits until sinfo shows the node idle, runs COMMAND with
# SLURM_CONF set (sbatch, squeue and scontrol then talk to this cluster), and
# stops every daemon it started, by its own pid, on every way out.
# Exit: COMMAND's, or 77 when Slurm cannot be installed or run here (skipped),
# or 1 when the cluster did not come up.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: slurm_cluster.sh DIR COMMAND [ARG...]" >&2; exit 2; }
dir=$1; shift
say() { echo "slurm_cluster: $*" >&2; }
skip() { say "skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd runs jobs as any user)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge (apt)"
  { apt-get install -y --no-install-recommends slurm-wlm munge >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends slurm-wlm munge >&2; }; } ||
    skip "could not install slurm-wlm and munge"
fi
rm -rf "$dir" && mkdir -p "$dir"/{state,spool} && dir=$(cd "$dir" && pwd)
# munge's socket path must fit a sockaddr_un (108 bytes): a deep DIR gets a short one
mdir=$dir/munge
[ ${#mdir} -gt 90 ] && mdir=$(mktemp -d /tmp/gatecheck-munge.XXXXXX)
mkdir -p "$mdir" && chmod 700 "$mdir"

pids=()
stop_all() {
  local p i
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for ((i = 0; i < 50; i++)); do
    local alive=no
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=yes; done
    [ $alive = no ] && return
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null && say "sent SIGKILL to pid $p"; done
}
cleanup() { stop_all; [ "$mdir" = "$dir/munge" ] || rm -rf "$mdir"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- munge: its own key and socket ---------------------------------------------
dd if=/dev/urandom of="$mdir/munge.key" bs=1024 count=1 status=none && chmod 400 "$mdir/munge.key"
# --force: the folders above DIR (a build tree, /tmp) may be group- or world-writable
munged --force --foreground --key-file="$mdir/munge.key" --socket="$mdir/munge.socket" \
  --pid-file="$mdir/munged.pid" --log-file="$mdir/munged.log" --seed-file="$mdir/munged.seed" \
  >"$dir/munged.out" 2>&1 &
pids+=($!)

# --- slurm.conf -----------------------------------------------------------------
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port) slurmd_port=$(free_port)
cat >"$dir/slurm.conf" <<CONF
ClusterName=gatecheck-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits this long before it starts again (default 120 s)
AuthInfo=socket=$mdir/munge.socket,cred_expire=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# jobs stay visible to squeue/scontrol for 10 minutes after they end
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
# a test campaign runs more short jobs at once than this machine has cores
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16
CONF
export SLURM_CONF=$dir/slurm.conf

# --- the daemons ------------------------------------------------------------------
for ((i = 0; i < 50; i++)); do [ -S "$mdir/munge.socket" ] && break; sleep 0.1; done
[ -S "$mdir/munge.socket" ] || { say "munged did not start:"; cat "$dir/munged.out" "$mdir/munged.log" >&2; exit 1; }
slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$dir/slurm.conf" -N "$host" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
say "munged, slurmctld and slurmd started (pids ${pids[*]}); config $dir/slurm.conf"
state=""
for ((i = 0; i < 300; i++)); do
  state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null)
  [ "$state" = idle ] && break
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { say "pid $p died"; i=300; }; done
  sleep 0.2
done
if [ "$state" != idle ]; then
  say "the node is not idle (sinfo: '${state:-no answer}'); the daemons' logs:"
  tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/*.out >&2
  exit 1
fi
sinfo >&2
"$@"
