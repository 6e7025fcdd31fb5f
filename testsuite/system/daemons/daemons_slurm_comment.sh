#!/bin/bash
# coordd's AdminComment reaches the real Slurm of the test cluster (fixture
# slurm.cluster_up) even when slurmctld is away as the decision changes: a
# failed slurm_update_job is logged as a warning and retried, never counted
# as written. The job_submit plugin's steering tag stays in the comment.
SRC=$1 BUILD=$2
CLUSTER=$BUILD/testsuite/slurm-cluster
export SLURM_CONF=$CLUSTER/etc/slurm.conf
for tool in slurmctld sbatch scontrol; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
[ -f "$BUILD/src/plugins/job_submit/harmonics/.libs/job_submit_harmonics.so" ] ||
    { echo "SKIP: job_submit/harmonics not built"; exit 77; }
. "$SRC/testsuite/system/daemons/lib.sh"
scontrol ping >/dev/null 2>&1 || fail "the test cluster in $CLUSTER is not up (fixture slurm.cluster_up)"
CTLD_PID=$CLUSTER/run/slurmctld.pid
ctld_back() {
    [ -n "${CTLD_DOWN:-}" ] || return 0
    CTLD_DOWN=
    "$SRC/contrib/minicluster/restart-ctld" "$CLUSTER" >/dev/null
}
trap 'ctld_back; scancel --quiet -u root 2>/dev/null; cleanup' EXIT

comment() { scontrol show job "$1" | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//'; }
has_comment() { comment "$1" | grep -Eq -- "$2"; }
submit() { sbatch --parsable --chdir="$T" --output=/dev/null "$@" | cut -d';' -f1; }

scancel --quiet -u root 2>/dev/null
WAIT_S=20 wait_for sh -c '[ -z "$(squeue -h -o %i -t PD,R,CG)" ]' || fail "the cluster's queue did not empty"

# The steering plugin reads the cluster's leaf summary: both leaves accept.
cat > "$CLUSTER/run/leaves.state.tmp" <<SUMMARY
harmonics-leaf-summary 1
epoch 1
written $(date +%s)
leaf rack1 nodes=n[1-4] feature=rack1 size=4 uplink_load=0.5 accept=1
leaf rack2 nodes=n[5-8] feature=rack2 size=4 uplink_load=0.5 accept=1
SUMMARY
mv "$CLUSTER/run/leaves.state.tmp" "$CLUSTER/run/leaves.state"

start_munged
# Long epochs: coordd's tick must not be what carries a comment to Slurm.
EPOCH=8s write_conf
echo "AdminCommentInterval=1s" >> "$T/harmonics.conf"
# Two jobs across both racks (chosen nodes: never steered) and one the
# plugin steers into one leaf.
a=$(submit -N4 --nodelist='n[3-4,7-8]' --wrap 'sleep 300') || fail sbatch
b=$(submit -N4 --nodelist='n[1-2,5-6]' --wrap 'sleep 300') || fail sbatch
s=$(submit -N2 --wrap 'sleep 300') || fail sbatch
for j in $a $b $s; do
    WAIT_S=30 wait_for sh -c "scontrol show job $j | grep -q JobState=RUNNING" || fail "job $j not running"
done
has_comment "$s" 'harmonics-steer: one-leaf' || fail "job $s not steered: $(comment "$s")"
steer=$(comment "$s")
steer_re=$(printf '%s' "$steer" | sed 's/[][\\.*^$|+?(){}]/\\&/g')

"$COORDD" -f "$T/harmonics.conf" --slurm yes --slurm-conf "$SLURM_CONF" --log "$T/coordd.log" &
PIDS+=($!)
# Comments follow the job table at once, not at the first tick (8 s).
WAIT_S=5 wait_for has_comment "$a" "^harmonics:leaves=rack1,rack2 state=" ||
    fail "job $a: no comment within 5 s of coordd's start: $(comment "$a")"
wait_for test -S "$T/coordd.sock" || fail "coordd socket missing"
start_schedd rack1
start_schedd rack2
WAIT_S=10 wait_for leaves_connected 2 || fail "schedds did not register with coordd"
for j in $a $b; do
    WAIT_S=20 wait_for has_comment "$j" "^harmonics:leaves=rack1,rack2 state=(waiting|free)$" ||
        fail "job $j: no comment: $(comment "$j")"
done
WAIT_S=20 wait_for has_comment "$s" "^harmonics:leaves=rack[12] state=(waiting|free); $steer_re$" ||
    fail "job $s lost its steering tag: $(comment "$s")"

# slurmctld goes away; meanwhile the colliding jobs get gated.
kill -TERM "$(cat "$CTLD_PID")" || fail "no slurmctld to stop"
CTLD_DOWN=1
WAIT_S=20 wait_for sh -c '! scontrol ping' || fail "slurmctld did not stop"
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs "$a,$b" --ranks 2 --node n3 --nnodes 4 --duration 60 \
    "${CROSS_PHASE[@]}" > "$T/h1.out" &
PIDS+=($!)
"$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs "$a,$b" --ranks 2 --rank-base 8 --node n7 --nnodes 4 --duration 60 \
    "${CROSS_PHASE[@]}" > "$T/h2.out" &
PIDS+=($!)
for j in $a $b; do
    WAIT_S=20 wait_for sh -c "'$CTL' -f '$T/harmonics.conf' show schedule | grep -q '^JobId=$j .*Gated=yes'" ||
        fail "job $j not gated"
done
# libslurm retries a lost slurmctld for MessageTimeout (10 s): outlast it.
WAIT_S=30 wait_for grep -q 'warning: AdminComment of job [0-9]* not updated: slurm_update_job' "$T/coordd.log" ||
    fail "no warning for a failed AdminComment update"
ctld_back || fail "slurmctld did not come back"
for j in $a $b; do
    WAIT_S=15 wait_for has_comment "$j" "^harmonics:leaves=rack1,rack2 period=[0-9.]*ms shift=[0-9.]*ms epoch=[0-9]* state=scheduled$" ||
        fail "job $j: AdminComment stale after slurmctld came back: $(comment "$j") / $(ctl show schedule)"
done
comment "$a"
comment "$s"
n=$(grep -c 'warning: AdminComment of job' "$T/coordd.log")
[ "$n" -le 2 ] || fail "$n warnings for one outage: not rate-limited"
echo PASS
