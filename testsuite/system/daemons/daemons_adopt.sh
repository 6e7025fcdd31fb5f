#!/bin/bash
# Four leaves, four cross-leaf jobs; coordd gives each job the lowest leaf it
# spans as owner. rack1 owns jobs 1 and 2 and packs them apart; rack2 owns job
# 3 and leaves it free, since job 4 (also rack2's) crosses its uplink nearly
# all the time. On rack3, which owns neither, free job 3 meets 1 and 2 at a
# phase nobody chose and takes them past their slack: rack3's schedd asks
# coordd for job 3 (the golden scenario cross-leaf-adopt in daemons), becomes
# its owner and gates it in the gap between them.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
# Phase families off: coordd would place these jobs itself (daemons.groups);
# this test is about adoption by a leaf.
PHASE_GROUPS=no start_four_leaves

adopt_jobs
run_two_node_jobs 8

grep -q 'job 3: runs free .* rack3 owns it now (adopted)' "$T/coordd.log" ||
    fail "coordd never gave free job 3 to rack3, where it takes gated jobs past their slack"
grep -h 'owns it now (adopted)' "$T/coordd.log"
grep -q 'job 3 runs free here .* asking to own it' "$T/schedd-rack3.log" || fail "rack3's schedd never asked for job 3"
ctl show job 3 | grep -q 'Owner=rack3 Adopted=yes' || fail "harmonicsctl does not show job 3 adopted: $(ctl show job 3)"
ctl show job 1 | grep -q 'Adopted' && fail "harmonicsctl shows job 1 adopted: $(ctl show job 1)"
ctl --json show job 3 | grep -q '"owner_leaf":"rack3","adopted":true,"run_free":false' ||
    fail "harmonicsctl --json: $(ctl --json show job 3)"
# Final schedules: jobs 1-3 gated on one period, pairwise apart by at least
# their 25 ms burst (modulo the period), job 3 decided by rack3.
grep -q '^JOB 3 .*owner=rack3' "$T/h3-a.out" || fail "job 3's last schedule is not rack3's: $(grep '^JOB 3 ' "$T/h3-a.out")"
apart 1 2 0.025
apart 1 3 0.025
apart 2 3 0.025
for j in 1 2 3; do settled $j 3; done

# A coordd restarted after kill -9 learns the hand-over back from the schedds
# (they keep the jobs coordd told them of): job 3 stays rack3's, adopted, and
# handed over already, so the guest rule and the once-per-job rule still hold.
kill -KILL "$COORDD_PID"
wait "$COORDD_PID" 2>/dev/null
wait_for grep -q 'coordd connection lost' "$T/schedd-rack3.log" || fail "rack3 did not notice coordd leaving"
start_coordd
WAIT_S=15 wait_for leaves_connected 4 || fail "schedds did not re-register after the restart"
ctl show job 3 | grep -q 'Owner=rack3 Adopted=yes' || fail "after a coordd restart: $(ctl show job 3)"
ctl --json show job 3 | grep -q '"adopted":true,"run_free":false,"handed_over":true' ||
    fail "after a coordd restart, harmonicsctl --json: $(ctl --json show job 3)"
ctl --json show job 1 | grep -q '"adopted":false,"run_free":false,"handed_over":false' ||
    fail "after a coordd restart, job 1: $(ctl --json show job 1)"
echo PASS
