#!/bin/bash
# Four leaves and the four cross-leaf jobs of daemons.conflict (golden
# cross-leaf-groups): owned by rack1 (jobs 1, 3) and rack2 (2, 4), they share
# one period, so coordd places them itself in windows of it (phase groups),
# such that the two rings on every leaf are in different windows. No leaf
# decides them, no hand-over is needed, and a coordd restarted after kill -9
# learns the windows back from the schedds.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
start_four_leaves

# One node on each of the job's two leaves; 60 ms at the whole uplink every
# 200 ms, one rank per node.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
for j in 1 2 3 4; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
run_two_node_jobs 8

for j in 1 2 3 4; do
    grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j never joined a phase family"
done
grep -h 'phase family P=' "$T/coordd.log" | head -n 3
grep -q 'owns it now' "$T/coordd.log" && fail "coordd handed a job over: $(grep -h 'owns it now' "$T/coordd.log")"
for j in 1 2 3 4; do
    ctl show job $j | grep -q 'Owner=(coordinator)' || fail "job $j is not the coordinator's: $(ctl show job $j)"
    ctl show job $j | grep -Eq 'Gated=yes .* Window=[0-2]/3 ' || fail "job $j has no window of 3: $(ctl show job $j)"
    # The job's last schedule from both its leaves is coordd's.
    for s in a b; do
        grep -q "^JOB $j .*owner=(coordinator)" "$T/h$j-$s.out" ||
            fail "job $j: hook $s's last schedule is not coordd's: $(grep "^JOB $j " "$T/h$j-$s.out")"
    done
    same_schedule_per_epoch $j "$T/h$j-a.out" "$T/h$j-b.out" || fail "job $j: its two leaves pushed different schedules"
    settled $j 3
done
ctl --json show job 1 | grep -q '"window":[0-2],"windows":3' || fail "harmonicsctl --json: $(ctl --json show job 1)"
# Every leaf's two rings in different windows: apart by their 60 ms burst.
apart 1 3 0.06   # rack1
apart 2 4 0.06   # rack2
apart 1 2 0.06   # rack3
apart 3 4 0.06   # rack4

windows() { for j in 1 2 3 4; do ctl show job $j | grep -o 'Shift=[^ ]* Window=[^ ]*'; done; }
before=$(windows)
kill -KILL "$COORDD_PID"
wait "$COORDD_PID" 2>/dev/null
mv "$T/coordd.log" "$T/coordd-first.log"
start_coordd
WAIT_S=15 wait_for leaves_connected 4 || fail "schedds did not re-register after the restart"
sleep 1   # a few ticks: a coordd that had forgotten the families would plan them anew
[ "$(windows)" = "$before" ] || fail "after a coordd restart the windows moved: $before / $(windows)"
grep -q 'joins a phase family' "$T/coordd.log" && fail "the restarted coordd planned the families anew"
echo PASS
