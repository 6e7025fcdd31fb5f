#!/bin/bash
# Three rings between rack1 and rack3, 25 ms of every iteration at the whole
# uplink: jobs 1 and 2 every 95 ms, job 3 every 99 ms, and job 3's hooks only
# measure (they never hold). On one 100 ms grid job 3, running free, arrives
# 1 ms early every period and comes to rest behind the burst before its slot
# (a 2 ms overlap costs it its 1 ms, and the neighbour 1 ms of its 5 ms of
# slack): its owner plans it there (the lock plan, LocalTuning::lock_measuring)
# and jobs 1 and 2 around it, gated apart on 100 ms. Job 3's hooks still only
# ever get free schedules; harmonicsctl shows it locked.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
PHASE_GROUPS=no start_four_leaves

declare -gA NODES=([1]="n1 n9" [2]="n2 n10" [3]="n3 n11") PHASE=()
PHASE[1]="--period 0.095 --phase-off 0.070 --phase-dur 0.025 --phase-bytes 0.3125e9"
PHASE[2]="${PHASE[1]}"
PHASE[3]="--period 0.099 --phase-off 0.074 --phase-dur 0.025 --phase-bytes 0.3125e9 --no-hold"
run_two_node_jobs 8

grep -Eq 'job [123]: gated .*decided here; .*; lock [0-9.]+ \(stretch [0-9.]+(, kept)?\) chosen' \
    "$T"/schedd-rack1.log "$T"/schedd-rack3.log ||
    fail "no owner took the lock plan: $(grep -h 'job [123]: ' "$T"/schedd-rack[13].log | tail -n 4)"
grep -q 'job 3: locked shift [0-9.]* period 0.1000 ' "$T"/schedd-rack1.log "$T"/schedd-rack3.log ||
    fail "no schedd logged job 3 locked: $(grep -h 'job 3: ' "$T"/schedd-rack[13].log | tail -n 2)"
show=$(ctl show job 3)
for want in State=locked Gated=locked Holds=no; do
    grep -q "$want" <<<"$show" || fail "harmonicsctl, job 3 without $want: $show"
done
ctl show job 1 | grep -q 'State=scheduled' || fail "harmonicsctl, job 1: $(ctl show job 1)"
never_gated 3
apart 1 2 0.025
for j in 1 2; do
    grep -q "^JOB $j .*period=0.1000* " "$T/h$j-a.out" || fail "job $j is not on the 100 ms grid: $(grep "^JOB $j " "$T/h$j-a.out")"
    settled $j 3
done
echo PASS
