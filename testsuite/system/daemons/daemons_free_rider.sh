#!/bin/bash
# Four leaves, uplinks 2:1 (twice a NIC), and the five rings of golden
# cross-leaf-free-rider: each takes half an uplink, rack3 and rack4 carry
# three (1.5 at once), rack1 and rack2 two. coordd plans them as one phase
# family of three windows; a ring that fits beside every window on both its
# leaves runs free at its own period instead of taking one (a free rider: its
# owner is the coordinator, its schedule ungated, on both leaves), and the
# rest are gated so that no window carries more than two rings on a leaf.
# Which rings ride free depends on their measured periods (most stretched
# first): at most one of each leaf's three, so one or two.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
OVERSUBSCRIPTION=2
start_munged
start_four_leaves

# 60 ms at one NIC's rate (half an uplink) every 200 ms, one rank per node.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14" [5]="n11 n15") PHASE
for j in 1 2 3 4 5; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
declare -A RACKS=([1]="rack1 rack3" [2]="rack2 rack3" [3]="rack1 rack4" [4]="rack2 rack4" [5]="rack3 rack4")
run_two_node_jobs 8

grep -h 'phase family P=' "$T/coordd.log" | head -n 3
grep -q 'owns it now' "$T/coordd.log" && fail "coordd handed a job over: $(grep -h 'owns it now' "$T/coordd.log")"
free=() gated=()
for j in 1 2 3 4 5; do
    coordinators_job $j
    if grep -q "job $j runs free beside a phase family" "$T/coordd.log"; then
        grep -q "^JOB $j gated=0 " "$T/h$j-a.out" || fail "free rider $j is gated: $(grep "^JOB $j " "$T/h$j-a.out")"
        ctl show job $j | grep -q 'Window=' && fail "free rider $j has a window: $(ctl show job $j)"
        free+=($j)
    else
        ctl show job $j | grep -Eq 'Gated=yes .* Window=[0-2]/3 ' || fail "job $j has no window of 3: $(ctl show job $j)"
        gated+=($j)
    fi
done
echo "free riders: ${free[*]:-none}; gated: ${gated[*]}"
[ ${#free[@]} -ge 1 ] && [ ${#free[@]} -le 2 ] || fail "${#free[@]} free riders (one or two fit)"
grep -Eq "phase family P=[0-9.]+ms windows=3 members=${#gated[@]} free=${#free[@]} " "$T/coordd.log" ||
    fail "no family line with ${#gated[@]} members and ${#free[@]} free riders"
# Gated rings that share a leaf are in different windows: apart by their burst.
for a in "${gated[@]}"; do
    for b in "${gated[@]}"; do
        [ "$a" -lt "$b" ] || continue
        for r in ${RACKS[$a]}; do
            case " ${RACKS[$b]} " in *" $r "*) apart $a $b 0.06 ;; esac
        done
    done
done

# A coordd restarted after kill -9 learns the family back from the schedds,
# its free riders as riders (their window count comes back with their
# schedule): it neither plans them anew nor moves a window, though rack4's
# schedd, with three of the five, registers two epochs after the others (a
# plan made before then saw two of the family's jobs and dissolved it).
windows() {
    for j in 1 2 3 4 5; do ctl show job $j | grep -o 'Owner=[^ ]*\|Gated=[^ ]*\|Shift=[^ ]*\|Window=[^ ]*' | tr '\n' ' '; echo; done
}
before=$(windows)
restart_coordd rack4
[ "$(windows)" = "$before" ] || fail "after a coordd restart the schedules moved: $before / $(windows)"
grep -Eq 'joins a phase family|runs free beside a phase family|leaves its phase family|in its phase family' "$T/coordd.log" &&
    fail "the restarted coordd planned the family anew: $(grep -E 'joins|runs free beside|leaves its|in its phase family' "$T/coordd.log")"
for j in "${free[@]}"; do
    out=$(ctl show job $j)
    grep -q 'Owner=(coordinator)' <<<"$out" && grep -q 'Gated=no' <<<"$out" || fail "after the restart rider $j: $out"
done
echo PASS
