#!/bin/bash
# A phase-family member that stays far past its family's period misses its
# slots for good (a gpt3-6.7b ring beside dlrm jobs ran 16 % past its 4.57 s
# for its whole life and waited 29 % of it at the gate; doc/scale.md,
# "Stop 39"). The four cross-leaf jobs of daemons.groups form a family of
# 0.2 s rings; after 4 s job 4's hooks report 0.24 s iterations (20 % past),
# their collective stretched from 60 to 100 ms by collisions the plan does
# not see (its own rhythm still fits the family: a slower compute would not,
# and would leave at once).
# Once that has lasted kFamilyOutrunS (30 s, policy/outrun.h) coordd takes
# job 4 out of the family and says why, its owner runs it free for the
# hold coordd passes on (after which it may join again), and jobs 1-3 stay
# in their windows. Within the
# tolerance (the family settling) nobody leaves: the first 30 s check that.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
start_four_leaves

declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
for j in 1 2 3; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
PHASE[4]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9 --later-period 0.24 --later-phase-dur 0.10 --after 4"
run_two_node_jobs 42

for j in 1 2 3 4; do
    grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j never joined a phase family"
done
grep -Eq 'job 4: in its phase family at period 0\.2[01][0-9]* s it iterated at 0\.24[0-9]* s \(net of the gate.s holds\) for 30 s: it misses its slots; out of families and free for 6 s' \
    "$T/coordd.log" || fail "coordd did not take job 4 out of its family: $(grep -h 'job 4' "$T/coordd.log")"
grep -q 'job 4 leaves its phase family' "$T/coordd.log" || fail "coordd's log does not say job 4 left its family"
for j in 1 2 3; do
    grep -q "job $j: in its phase family" "$T/coordd.log" && fail "job $j, on its family's period, was taken out"
    grep -q "job $j leaves its phase family" "$T/coordd.log" && fail "job $j left its family"
    grep -q "^JOB $j gated=1 .*owner=(coordinator)" "$T/h$j-a.out" ||
        fail "job $j does not end in its family: $(grep "^JOB $j " "$T/h$j-a.out")"
done
# Not before 30 s of outrunning: the 4 s of warm-up plus 30.
first=$(grep -m1 "job 4: in its phase family" "$T/coordd.log" | cut -c12-23)
start=$(grep -m1 "job 4 joins a phase family" "$T/coordd.log" | cut -c12-23)
awk -v a="$start" -v b="$first" 'function s(t, p) { split(t, p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }
    BEGIN { d = s(b) - s(a); if (d < 30 || d > 40) { print "taken out " d " s after joining"; exit 1 } }' ||
    fail "job 4 left at the wrong time (joined $start, out $first)"
# Its owner runs it free for the hold (30 epochs of 0.2 s here), and both
# its hooks get a free schedule after their gated ones.
grep -Eq 'job 4: runs free for [56] s more: gated, it kept iterating past its period' "$T"/schedd-rack*.log ||
    fail "job 4's owner did not learn the hold: $(grep -h 'job 4' "$T"/schedd-rack*.log | tail -n 3)"
for s in a b; do
    grep '^SCHED job=4 ' "$T/h4-$s.out" | awk '$3 == "gated=1" { g = 1 } g && $3 == "gated=0" { ok = 1 } END { exit !ok }' ||
        fail "job 4's hooks ($s) never ran free after their gate: $(grep '^SCHED job=4 ' "$T/h4-$s.out" | tail -n 4)"
done
echo PASS
