#!/usr/bin/env bash
# Fault drills on the EMULATED testbed (real Slurm and Harmonics, emulated
# GPUs and fabric), with Harmonics on and the demo's three BERT-large jobs
# sharing both uplinks:
#   schedd  kill -9 the owner leaf's schedd once jobs are gated: the jobs keep
#           iterating ungated (nothing hangs); restarted, it learns the jobs
#           again and gates them again
#   coordd  kill -9 coordd: the jobs keep iterating; restarted, it rebuilds
#           its table from Slurm and the jobs are gated again
#   cancel  scancel one job mid-iteration: its leaf drops it within two
#           epochs and the others run to the end
#   drill.sh SRCDIR BUILDDIR schedd|coordd|cancel     (exit 77: not built)
set -uo pipefail
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
KIND=$3
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
[ -f "$BUILD/src/plugins/prep/harmonics/.libs/prep_harmonics.so" ] || { echo "SKIP: prep/harmonics not built"; exit 77; }
WORK=$BUILD/testsuite/e2e-drill-$KIND
mkdir -p "$WORK"
PORT=$((20000 + $(printf %s "$WORK" | cksum | cut -d' ' -f1) % 625 * 16))
SCALE=10 ITER_F=1 NODES=10 RACKS=2 RUN_TIMEOUT=240 AGREE=10
EPOCH_WALL=1   # model Epoch 100 ms at time scale x10
WORKLOAD=$WORK/workload.csv
grep 'bert-large' "$SRC/contrib/demo/workload.csv" | sed 's/,40,/,30,/' > "$WORKLOAD"
. "$SRC/contrib/demo/lib.sh"
fail() { printf '\nFAIL (%s drill): %s\n' "$KIND" "$*" >&2; exit 1; }
ctl() { "$HCTL" -f "$ETC/testbed.conf" "$@"; }

need_tools
trap teardown EXIT
trap 'exit 130' INT TERM
setup_cluster
start_fabric
start_harmonics
job_env on
RUN=$WORK/runs/on
mkdir -p "$RUN"
submit_jobs "$RUN"
gated() { ctl show schedule | grep -q 'Gated=yes'; }
learnt() {  # learnt LOG [FROM_LINE]: the schedd of LOG heard from all 3 jobs
  [ "$(tail -n +"${2:-1}" "$1" | grep -c 'arrived')" -ge 3 ]
}
poll 90 "both schedds to learn the 3 jobs" sh -c "[ \$(cat $WORK/log/schedd-rack*.log | grep -c arrived) -ge 6 ]"
sleep $((3 * EPOCH_WALL))
# Re-scheduling after a fault is asserted as far as the policy scheduled before it.
was_gated=no
gated && was_gated=yes
echo "before the fault: gated schedule: $was_gated"
regated() { [ $was_gated = no ] || gated; }
# progressing SECONDS: every job still running got at least one iteration further.
progressing() {
  local before after jid
  before=$(for jid in "${JOB_IDS[@]}"; do wc -l < "$RUN/$jid-rank0.csv"; done)
  sleep "$1"
  after=$(for jid in "${JOB_IDS[@]}"; do wc -l < "$RUN/$jid-rank0.csv"; done)
  paste <(echo "$before") <(echo "$after") | awk '$2 <= $1 { bad = 1 } END { exit bad }'
}
owner_log=$WORK/log/schedd-rack1.log
case $KIND in
  schedd)
    owner=$(ctl show jobs | sed -n 's/.*Owner=\(rack[0-9]\).*/\1/p' | head -n 1)
    owner=${owner:-rack1}
    r=${owner#rack}
    kill -KILL "${SCHEDD_PIDS[$((r - 1))]}"
    wait "${SCHEDD_PIDS[$((r - 1))]}" 2>/dev/null
    from=$(wc -l < "$WORK/log/schedd-$owner.log")
    # The hooks time out on the schedd (5 s) and run ungated meanwhile.
    progressing 8 || fail "jobs stopped iterating while the schedd of $owner was down"
    start_schedd "$r"
    poll 60 "the restarted schedd of $owner to learn the 3 jobs again" learnt "$WORK/log/schedd-$owner.log" "$from"
    poll 60 "a gated schedule after the schedd restart" regated
    ;;
  coordd)
    kill -KILL "$COORDD_PID"
    wait "$COORDD_PID" 2>/dev/null
    COORDD_PID=""
    progressing 8 || fail "jobs stopped iterating while coordd was down"
    grep -q 'coordd connection lost' "$owner_log" || fail "schedd did not notice coordd going away"
    start_coordd
    all_known() { [ "$(ctl show jobs | grep 'State=' | grep -vc 'State=ended')" -ge 3 ]; }
    poll 60 "coordd to list the 3 running jobs again" all_known
    poll 60 "a gated schedule after the coordd restart" regated
    ;;
  cancel)
    victim=${JOB_IDS[1]}
    t0=$SECONDS
    scancel "$victim"
    gone() { cat "$WORK"/log/schedd-rack*.log | grep -qE "job $victim (ended|departed)"; }
    poll $((2 * EPOCH_WALL + 3)) "a leaf to drop cancelled job $victim within two epochs (+3 s for Slurm)" gone
    echo "job $victim dropped by its leaf $((SECONDS - t0)) s after scancel"
    JOB_IDS=("${JOB_IDS[0]}" "${JOB_IDS[2]}")
    progressing 5 || fail "the other jobs stopped after the cancel"
    ;;
  *) fail "unknown drill $KIND" ;;
esac
# Nothing hangs: every remaining job runs to its last iteration.
end=$((SECONDS + RUN_TIMEOUT))
while [ "$(jobs_left "${JOB_IDS[@]}")" -gt 0 ]; do
  [ $SECONDS -lt $end ] || fail "jobs still running ${RUN_TIMEOUT}s after the drill"
  sleep 1
done
for jid in "${JOB_IDS[@]}"; do
  rows=$(($(wc -l < "$RUN/$jid-rank0.csv") - 1))
  [ "$rows" -eq 30 ] || fail "job $jid finished $rows of 30 iterations"
done
JOB_IDS=()
echo "PASS ($KIND drill)"
