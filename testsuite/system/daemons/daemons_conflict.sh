#!/bin/bash
# Four leaves and four cross-leaf jobs, as the golden scenario
# cross-leaf-conflict: jobs 1 and 3 are owned by rack1, 2 and 4 by rack2, and
# each owner packs its two jobs apart with the same shifts, so 1 and 2 collide
# on rack3 and 3 and 4 on rack4, leaves that own neither. Those leaves report
# how much of the jobs' slack the collisions take; coordd hands one job of
# each pair to the leaf where it collides, which shifts it apart from the other.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
# Phase families off: coordd would place these jobs itself (daemons.groups);
# this test is about the owners' conflict rule.
PHASE_GROUPS=no start_four_leaves

# Slurm says where each job runs: one node on each of its two leaves. 60 ms
# of communication every 200 ms at the whole uplink (30 % of the period, as
# the golden scenario), one rank per node.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
for j in 1 2 3 4; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
run_two_node_jobs 8

grep -q 'owns it now' "$T/coordd.log" || fail "coordd never handed a colliding job to the leaf where it collides"
grep -h 'owns it now' "$T/coordd.log"
ctl show jobs | grep -q 'HandedOver=yes' || fail "harmonicsctl shows no job handed over: $(ctl show jobs)"
# Final schedules: every job gated, and each pair that shares a leaf nobody
# owned at first is apart by at least its 60 ms burst (modulo the period).
apart 1 2 0.06
apart 3 4 0.06
# And they stay put: owners reacting together to each other's moves once
# swapped shifts every epoch to the end (settled within 0.4 s in 12 runs
# since they react one after another).
for j in 1 2 3 4; do settled $j 3; done
echo PASS
