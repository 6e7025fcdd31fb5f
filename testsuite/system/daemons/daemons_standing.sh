#!/bin/bash
# Coordd weighs where cross-leaf jobs' bursts stand before it forms a phase
# family: the hooks report where their iterations start, the schedds pass the
# latest on (LeafJob.iteration_start_s), and what running free costs the jobs
# is their bursts as they stand (PhaseGroupOptions::standing_periods). The
# four rings of daemons.groups, 40 ms at the whole uplink every 200 ms, with
# their bursts half a period apart on every leaf never meet: no family is
# formed, coordd saying why (the queueing estimate alone formed one). The
# same four rings at one phase meet on every burst and form one.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
start_four_leaves

RING="--period 0.2 --phase-dur 0.04 --phase-bytes 0.5e9 --iteration-start"
# Half a period apart on every leaf: rack1 1|3, rack2 2|4, rack3 1|2, rack4 3|4.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
for j in 1 4; do PHASE[$j]="$RING --phase-off 0.0"; done
for j in 2 3; do PHASE[$j]="$RING --phase-off 0.1"; done
run_two_node_jobs 4
grep -h 'phase family P=' "$T/coordd.log" | head -n 3
grep -q 'phase family .*members=4 not formed: .* (4 as their bursts stand)' "$T/coordd.log" ||
    fail "coordd did not weigh where the bursts stand: $(grep -h 'phase family' "$T/coordd.log" | head -n 3)"
grep -q 'joins a phase family' "$T/coordd.log" && fail "rings that never meet formed a family: $(grep -h 'joins a phase family' "$T/coordd.log")"
for j in 1 2 3 4; do
    ctl show job $j | grep -q 'Owner=(coordinator)' && fail "job $j is in a family: $(ctl show job $j)"
done

# The same rings at one phase (new jobs on the same nodes): a family.
declare -A NODES=([11]="n1 n9" [12]="n5 n10" [13]="n2 n13" [14]="n6 n14") PHASE
for j in 11 12 13 14; do PHASE[$j]="$RING --phase-off 0.0"; done
run_two_node_jobs 4
for j in 11 12 13 14; do
    grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j, colliding on every burst, joined no family"
done
echo PASS
