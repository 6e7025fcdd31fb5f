#!/bin/bash
# A leaf weighs the wait a new gate costs a job over the time it has left
# (LocalTuning::charge_waits): coordd passes Slurm's end time (JobEvent
# end_time_s) to the schedds, the hooks report where their iterations start.
# Two cross-leaf jobs whose collectives collide on the uplinks (families off,
# so their owner leaf plans them): told they end within a period, their owner
# runs them free, its explain line naming the waits; told they have an hour
# left, it gates them apart. harmonicsctl shows the end time.
SRC=$1 BUILD=$2
PHASE_GROUPS=no
. "$SRC/testsuite/system/daemons/lib.sh"
start_two_leaves

# run_pair JOBS TAG [NOTIFY OPTIONS]: the two jobs announced started (ending
# TAG s from now unless options say otherwise), one rank of each on n3 and n7
# (rack1 and rack2) reporting for 4 s.
run_pair() {
    local opts=("${@:3}")
    [ ${#opts[@]} -gt 0 ] || opts=(--end-in "$2")
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs "$1" --job-uid 0 --nodes 'n[3,7]' "${opts[@]}" >/dev/null ||
        fail "notify $1"
    "$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs "$1" --node n3 --nnodes 2 --duration 4 --history --iteration-start \
        "${CROSS_PHASE[@]}" > "$T/h$2-a.out" &
    local a=$!
    "$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs "$1" --rank-base 1 --node n7 --nnodes 2 --duration 4 --history \
        --iteration-start "${CROSS_PHASE[@]}" > "$T/h$2-b.out" || { cat "$T"/h*.out; fail "jobs $1: no schedule"; }
    wait $a || { cat "$T"/h*.out; fail "jobs $1: no schedule"; }
    grep -h '^JOB' "$T/h$2-a.out"
}
# The explain lines of the leaf that owns JOB (the first pair's: before the second runs).
owner_explains() {
    local owner
    owner=$(ctl show job "$1" | sed -n 's/.*Owner=\(rack[12]\).*/\1/p')
    [ -n "$owner" ] || fail "job $1 has no owner: $(ctl show job "$1")"
    grep ': free [0-9.]*.*; harmonic ' "$T/schedd-$owner.log"
}

# Within a period of their end: a first slot costs more than it could save.
run_pair 300,301 0.2
for j in 300 301; do
    grep -q "^JOB $j gated=0 " "$T/h0.2-a.out" || fail "job $j, ending now, was gated: $(grep "^JOB $j" "$T/h0.2-a.out")"
done
ctl show job 300 | grep -Eq 'EndTime=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}' || fail "no EndTime: $(ctl show job 300)"
ctl --json show job 300 | grep -Eq '"end_time_s":[0-9]{10}[,}]' || fail "no end_time_s: $(ctl --json show job 300)"
lines=$(owner_explains 300)
echo "$lines" | grep -q ' waits [0-9.]*.*all free' || fail "no refusal for the waits in the owner's explain lines: $lines"

# gated_apart TAG A B: jobs A and B gated, at different shifts, in run TAG.
gated_apart() {
    local j s
    for j in "$2" "$3"; do
        grep -q "^JOB $j gated=1 " "$T/h$1-a.out" || fail "job $j ($1) is not gated: $(grep "^JOB $j" "$T/h$1-a.out")"
    done
    s=($(grep -E "^JOB ($2|$3) " "$T/h$1-a.out" | sed 's/.*shift=\([^ ]*\).*/\1/'))
    [ "${s[0]}" != "${s[1]}" ] || fail "colliding jobs $2 and $3 got the same shift ${s[0]} ($1)"
}

# Their limit lifted (`scontrol update TimeLimit=UNLIMITED`; slurmctld tells
# coordd so, as prep/harmonics does of a job started again without one): the
# leaves drop the end that had passed, and the pair is gated apart.
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 300,301 --job-uid 0 --nodes 'n[3,7]' --limit-known >/dev/null ||
    fail "notify 300,301 without a limit"
for leaf in rack1 rack2; do
    WAIT_S=5 wait_for grep -q "job 300: no time limit now (via coordd)" "$T/schedd-$leaf.log" ||
        fail "$leaf kept job 300's end: $(grep 'job 300' "$T/schedd-$leaf.log")"
done
ctl show job 300 | grep -q 'EndTime=' && fail "EndTime after the limit was lifted: $(ctl show job 300)"
run_pair 300,301 lifted --limit-known
gated_apart lifted 300 301

# An hour left: a new pair is gated apart.
for j in 300 301; do
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs $j --state end --job-uid 0 --nodes 'n[3,7]' >/dev/null || fail "end $j"
done
run_pair 400,401 3600
gated_apart 3600 400 401
echo PASS
