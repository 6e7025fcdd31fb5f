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

# run_pair JOBS END_IN: the two jobs announced ending END_IN s from now, one
# rank of each on n3 and n7 (rack1 and rack2) reporting for 4 s.
run_pair() {
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs "$1" --job-uid 0 --nodes 'n[3,7]' --end-in "$2" >/dev/null ||
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

# An hour left: the same pair is gated apart.
for j in 300 301; do
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs $j --state end --job-uid 0 --nodes 'n[3,7]' >/dev/null || fail "end $j"
done
run_pair 400,401 3600
for j in 400 401; do
    grep -q "^JOB $j gated=1 " "$T/h3600-a.out" || fail "job $j, an hour left, is not gated: $(grep "^JOB $j" "$T/h3600-a.out")"
done
s400=$(grep "^JOB 400 " "$T/h3600-a.out" | sed 's/.*shift=\([^ ]*\).*/\1/')
s401=$(grep "^JOB 401 " "$T/h3600-a.out" | sed 's/.*shift=\([^ ]*\).*/\1/')
[ "$s400" != "$s401" ] || fail "colliding jobs 400 and 401 got the same shift $s400"
echo PASS
