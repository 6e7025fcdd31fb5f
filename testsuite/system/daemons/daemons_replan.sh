#!/bin/bash
# A phase family built from the jobs learnt so far can leave no room for one
# learnt later; it is planned again with it (policy/phase_groups.cpp, doc/
# scale.md "Stop 40"). Four leaves with 2:1 uplinks: a ring at its NICs' rate
# fills half an uplink, two rings fill one. Rings of one node on each of two
# leaves, 80 ms of communication every 200 ms (two windows):
#   jobs 1 and 3 on rack2+rack4, job 2 on rack1+rack2, job 4 on rack3+rack4.
# Learnt, two of rack2's three rings 1-3 take a window each and the third
# rides free beside them (it fits beside every window), so rack2 carries two
# rings in both windows; job 4 rides free or takes a window. Job 5
# (rack2+rack3) starts 3 s later and has no room on rack2; at its peak it
# overloads both of rack2's members (dirty=2, past the quarter a family may
# have). Planned again with it, rack2's four rings take two per window (the
# rider gated now); coordd says so and every member's leaves push the new
# windows. Before stop 40 the family stayed as it was and job 5 ran free
# through it for good.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
OVERSUBSCRIPTION=2
start_munged
start_four_leaves

RING="--period 0.2 --phase-off 0.12 --phase-dur 0.08 --phase-bytes 1.0e9"
declare -A NODES=([1]="n5 n13" [2]="n1 n6" [3]="n7 n14" [4]="n9 n15") PHASE=([1]="$RING" [2]="$RING" [3]="$RING" [4]="$RING")
declare -A RACKS=([1]="rack2 rack4" [2]="rack1 rack2" [3]="rack2 rack4" [4]="rack3 rack4" [5]="rack2 rack3")
late_two_node_job 5 3 6 "n8 n10" $RING &
LATE=$!
run_two_node_jobs 10
wait $LATE || { cat "$T"/h5-*.out; fail "job 5's hooks got no schedule"; }
grep -h 'phase family P=\|phase family:\|phase family now\|beside a phase family' "$T/coordd.log"

# Before job 5: of rack2's three rings (jobs 1-3), two took a window each
# and the third rode free beside them (rack2 full in both windows); which
# one rides depends on the order coordd learnt them.
gated=() rider=""
for j in 1 2 3; do
    if grep -q "job $j runs free beside a phase family" "$T/coordd.log"; then
        rider=$j
    else
        w=$(sed -n "s/.*job $j joins a phase family: window \([01]\) of 2 .*/\1/p" "$T/coordd.log" | head -n 1)
        [ -n "$w" ] || fail "job $j neither took a window of 2 nor rode free"
        gated+=("$w")
    fi
done
[ -n "$rider" ] && [ "${#gated[@]}" = 2 ] && [ "${gated[0]}" != "${gated[1]}" ] ||
    fail "rack2's rings were not two windows and a rider: rider '$rider', windows ${gated[*]}"
grep -Eq 'phase family P=[0-9.]+ms windows=2 members=[23] dirty=2 planned again: too many members overload a link' \
    "$T/coordd.log" || fail "the family was not planned again: $(grep -h 'phase family' "$T/coordd.log")"
grep -q 'job 5 joins a phase family: window [01] of 2' "$T/coordd.log" || fail "job 5 did not join the family"
grep -q "job $rider is gated in its phase family now: window [01] of 2 .*(it ran free beside it)" "$T/coordd.log" ||
    fail "coordd's log does not say rider $rider took a window"
grep -Eq 'job [1-4] moves in its phase family: window [01] of 2 of 0\.2[0-9]* s' \
    "$T/coordd.log" || fail "coordd's log does not say which members moved"
grep -q 'stays: planned again\|refused' "$T/coordd.log" && fail "coordd kept or refused a family: $(grep -h 'phase family' "$T/coordd.log")"

# After: rack2's rings two per window (job 4 rides free or has a window:
# rack4 and rack3 have room either way); the leaves agree and hold still.
for j in 1 2 3 4 5; do coordinators_job $j; done
for j in 1 2 3 5; do
    ctl show job $j | grep -Eq 'Gated=yes .* Window=[01]/2 ' || fail "job $j has no window of 2: $(ctl show job $j)"
done
windows=$(for j in 1 2 3 5; do ctl show job $j | grep -o 'Window=[01]'; done | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')
[ "$windows" = "2 2 " ] || fail "rack2's rings are not two per window: $(for j in 1 2 3 5; do ctl show job $j; done)"
for a in 1 2 3 5; do
    for b in 1 2 3 5; do
        [ "$a" -lt "$b" ] || continue
        sa=$(grep "^JOB $a " "$T/h$a-a.out" | sed 's/.* shift=\([^ ]*\) .*/\1/')
        sb=$(grep "^JOB $b " "$T/h$b-a.out" | sed 's/.* shift=\([^ ]*\) .*/\1/')
        [ "$sa" = "$sb" ] && continue   # one window: two rings fill rack2's uplink, none beyond
        for r in ${RACKS[$a]}; do
            case " ${RACKS[$b]} " in *" $r "*) apart $a $b 0.08 ;; esac
        done
    done
done
echo PASS
