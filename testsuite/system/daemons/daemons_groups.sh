#!/bin/bash
# Four leaves and the four cross-leaf jobs of daemons.conflict (golden
# cross-leaf-groups): owned by rack1 (jobs 1, 3) and rack2 (2, 4), they share
# one period, so coordd places them itself in windows of it (phase groups),
# such that the two rings on every leaf are in different windows. No leaf
# decides them, no hand-over is needed, a fifth job arriving later takes the
# window left free on its leaves without moving the others, and a coordd
# restarted after kill -9 learns the windows back from the schedds.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
start_four_leaves

# One node on each of the job's two leaves; 60 ms at the whole uplink every
# 200 ms, one rank per node.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
for j in 1 2 3 4; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
# A fifth ring across rack3 and rack4 arrives 3 s later (golden
# cross-leaf-groups): both leaves have window 2 free, it joins there, and the
# running members do not move.
late_two_node_job 5 3 4.5 "n11 n15" ${PHASE[1]} &
LATE=$!
run_two_node_jobs 8
wait $LATE || { cat "$T"/h5-*.out; fail "job 5's hooks got no schedule"; }

for j in 1 2 3 4; do
    grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j never joined a phase family"
done
grep -h 'phase family P=' "$T/coordd.log" | head -n 3
grep -q 'owns it now' "$T/coordd.log" && fail "coordd handed a job over: $(grep -h 'owns it now' "$T/coordd.log")"
for j in 1 2 3 4; do
    coordinators_job $j
    ctl show job $j | grep -Eq 'Gated=yes .* Window=[0-2]/3 ' || fail "job $j has no window of 3: $(ctl show job $j)"
done
ctl --json show job 1 | grep -q '"window":[0-2],"windows":3' || fail "harmonicsctl --json: $(ctl --json show job 1)"
# Jobs 1-4 got coordd's schedule once and kept it, job 5's arrival included.
for j in 1 2 3 4; do
    n=$(grep -c "^SCHED job=$j .*owner=(coordinator)" "$T/h$j-a.out")
    [ "$n" = 1 ] || fail "job $j: $n schedules from coordd: $(grep "^SCHED job=$j " "$T/h$j-a.out")"
done
grep -q 'job 5 joins a phase family: window 2 of 3' "$T/coordd.log" ||
    fail "job 5 did not join window 2: $(grep -h 'job 5' "$T/coordd.log" | tail -n 3)"
grep -q '^JOB 5 gated=1 .*owner=(coordinator)' "$T/h5-a.out" || fail "job 5's last schedule: $(grep '^JOB 5' "$T/h5-a.out")"
same_schedule_per_epoch 5 "$T/h5-a.out" "$T/h5-b.out" || fail "job 5: its two leaves pushed different schedules"
apart 1 5 0.06   # rack3: 1, 2 and 5 in three windows
apart 2 5 0.06
apart 3 5 0.06   # rack4: 3, 4 and 5
apart 4 5 0.06
# Every leaf's two rings in different windows: apart by their 60 ms burst.
apart 1 3 0.06   # rack1
apart 2 4 0.06   # rack2
apart 1 2 0.06   # rack3
apart 3 4 0.06   # rack4

windows() { for j in 1 2 3 4 5; do ctl show job $j | grep -o 'Shift=[^ ]* Window=[^ ]*'; done; }
before=$(windows)
restart_coordd
[ "$(windows)" = "$before" ] || fail "after a coordd restart the windows moved: $before / $(windows)"
grep -Eq 'joins a phase family|in its phase family' "$T/coordd.log" && fail "the restarted coordd planned the families anew"
echo PASS
