#!/usr/bin/env bash
# slurm_compare.sh: the same job stream through Slurm on this machine, for
# comparison with Tessera's build/bench/agent_scale (DESIGN.md section 10:
# "Side by side on the same machine and the same job stream, Tessera is compared
# with Slurm (Debian's slurm-wlm): scheduling throughput and submit->start latency").
#
# Starts a private, throw-away Slurm (munged, slurmctld, slurmd; this host as
# its one node, ports on 127.0.0.1, everything under a temporary directory),
# then submits --jobs short batch jobs --gap-ms apart with sbatch, each running
# `true` after writing its start time, and waits until all have finished:
#
#   submit -> start = the job's first instruction (date +%s%N in the batch
#                     script) - the moment sbatch was invoked for it
#   jobs completed/s = jobs / (last job gone from squeue - first submission)
#
# Slurm's figure ends when the job's script starts; Tessera's when the API shows
# the pod Running, a little later in the same chain.
#
# The last lines are the figures:
#   BENCH slurm_submit_to_start_p50_ms <v> ms
#   BENCH slurm_submit_to_start_p99_ms <v> ms
#   BENCH slurm_jobs_completed_per_s <v> 1/s
#
# Slurm runs with Debian's defaults (backfill scheduler, batch_sched_delay=3 s);
# --scheduler-parameters sets SchedulerParameters, e.g.
# batch_sched_delay=0,sched_min_interval=0 to ask it for its lowest latency.
# sbatch is a process per job, so a --gap-ms below its own start-up time
# (about 10 ms here) does not raise the offered rate further.
#
# Needs root (slurmd runs jobs as their submitter). Installs Debian's slurm-wlm
# and munge when they are missing. Not part of `make bench` (it installs
# packages); run it as `make bench-slurm` or directly (KEEP=1 keeps the logs):
#   bench/slurm_compare.sh [--jobs N] [--gap-ms G] [--scheduler-parameters P]
# The defaults (1,000 jobs, 20 ms apart) are agent_scale's latency phase.
set -euo pipefail

jobs=1000
gap_ms=20
scheduler_parameters=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --jobs=*) jobs="${1#*=}"; shift ;;
    --gap-ms) gap_ms="$2"; shift 2 ;;
    --gap-ms=*) gap_ms="${1#*=}"; shift ;;
    --scheduler-parameters) scheduler_parameters="$2"; shift 2 ;;
    --scheduler-parameters=*) scheduler_parameters="${1#*=}"; shift ;;
    *) echo "slurm_compare: unknown flag $1 (--jobs N, --gap-ms G)" >&2; exit 2 ;;
  esac
done

if [[ $(id -u) -ne 0 ]]; then
  echo "slurm_compare: needs root (slurmd starts jobs as their submitter)" >&2
  exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm_compare: installing Debian's slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
fi

dir=$(mktemp -d /tmp/tessera-slurm-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n "${KEEP:-}" ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

# Free ports on 127.0.0.1 for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

mkdir -p "$dir"/{state,spool,start,munge}
chmod 0700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$dir/munge/munge.key"
munged --foreground --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
  --force >"$dir/munge/munged.out" 2>&1 &
pids+=($!)

host=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
cat >"$dir/slurm.conf" <<EOF
ClusterName=tessera-bench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MaxJobCount=100000
${scheduler_parameters:+SchedulerParameters=$scheduler_parameters}
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=bench Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:64
EOF
export SLURM_CONF="$dir/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
pids+=($!)

# Wait for the node to be idle.
for _ in $(seq 1 300); do
  if sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; then break; fi
  sleep 0.1
done
if ! sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; then
  echo "slurm_compare: the Slurm node did not come up; logs:" >&2
  tail -n 20 "$dir"/slurmctld.out "$dir"/slurmd.out "$dir"/slurmctld.log "$dir"/slurmd.log >&2 || true
  exit 1
fi

declare -A submitted
gap_s=$(awk -v g="$gap_ms" 'BEGIN {printf "%.3f", g / 1000}')
first=$(date +%s%N)
for ((i = 0; i < jobs; i++)); do
  t=$(date +%s%N)
  id=$(sbatch --parsable --output=/dev/null --cpus-per-task=1 \
    --wrap "date +%s%N > $dir/start/\$SLURM_JOB_ID; true")
  submitted[$id]=$t
  if [[ "$gap_ms" != 0 ]]; then sleep "$gap_s"; fi
done
while [[ -n "$(squeue -h -o %i 2>/dev/null)" ]]; do sleep 0.05; done
last=$(date +%s%N)

latencies="$dir/latencies"
: >"$latencies"
for id in "${!submitted[@]}"; do
  if [[ -s "$dir/start/$id" ]]; then
    echo $(( ($(cat "$dir/start/$id") - submitted[$id]) / 1000 )) >>"$latencies"
  fi
done
started=$(wc -l <"$latencies")
sort -n "$latencies" -o "$latencies"
percentile() {  # microseconds -> milliseconds, nearest rank
  awk -v q="$1" '{v[NR] = $1} END {i = int(q * (NR - 1) + 0.5) + 1; printf "%.2f", v[i] / 1000}' "$latencies"
}
p50=$(percentile 0.5)
p99=$(percentile 0.99)
rate=$(awk -v n="$jobs" -v a="$first" -v b="$last" 'BEGIN {printf "%.1f", n / ((b - a) / 1e9)}')
echo "slurm_compare: Slurm $(slurmctld -V | awk '{print $2}'), $jobs jobs submitted ${gap_ms} ms apart with sbatch;" \
  "$started started, all finished in $(awk -v a="$first" -v b="$last" 'BEGIN {printf "%.2f", (b - a) / 1e9}') s"
echo "BENCH slurm_submit_to_start_p50_ms $p50 ms"
echo "BENCH slurm_submit_to_start_p99_ms $p99 ms"
echo "BENCH slurm_jobs_completed_per_s $rate 1/s"
