#!/bin/bash
# Coordd weighs where cross-leaf jobs' bursts stand before it forms a phase
# family: the hooks report where their iterations start, the schedds pass the
# latest on (LeafJob.iteration_start_s), and what running free costs the jobs
# is their bursts as they stand (PhaseGroupOptions::standing_periods). The
# four rings of daemons.groups, 40 ms at the whole uplink every 200 ms, with
# their bursts half a period apart on every leaf never meet: no family is
# formed, coordd saying why (the queueing estimate alone formed one). The
# same four rings at one phase meet on every burst and form one. Rings that
# drift into each other (two of them 3 % faster) are weighed over the time
# they have left: coordd gives the policy Slurm's end time, as the simulator
# does. Ended (their time limit passed), running free costs them nothing over
# their next period; with no limit, their next twenty cost more than a shared
# period, and they form a family. At one phase and ended, the waits for a
# new family's first slots cost them more than it saves: none.
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

# end_jobs: the jobs in NODES end (no family in force left for the next to join).
end_jobs() {
    local j
    for j in "${!NODES[@]}"; do
        set -- ${NODES[$j]}
        "$HX_CLIENT" notify "$T/coordd.sock" --jobs $j --state end --job-uid 0 --nodes "$1,$2" >/dev/null ||
            fail "end job $j"
    done
}
# drifting NOTIFY_OPTS BASE [PERIOD OFFSET]: the four rings again, jobs BASE+1
# and BASE+4 at 200 ms, BASE+2 and BASE+3 at PERIOD (194 ms) and OFFSET
# (100 ms) later: 6 ms nearer every period, they meet ten periods in. LINE:
# coordd's first family line about them.
drifting() {
    local b=$2 j before
    end_jobs
    declare -gA NODES=([$((b + 1))]="n1 n9" [$((b + 2))]="n5 n10" [$((b + 3))]="n2 n13" [$((b + 4))]="n6 n14") PHASE=()
    for j in 1 4; do PHASE[$((b + j))]="$RING --phase-off 0.0"; done
    for j in 2 3; do PHASE[$((b + j))]="${RING/--period 0.2/--period ${3:-0.194}} --phase-off ${4:-0.1}"; done
    before=$(wc -l < "$T/coordd.log")
    NOTIFY_OPTS=$1 run_two_node_jobs 4 >/dev/null
    LINE=$(tail -n +$((before + 1)) "$T/coordd.log" | grep -m1 -E 'phase family P=[0-9.]+ms .*members=4 ')
}
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14")
end_jobs   # the first run's; the second's end in drifting
declare -A NODES=([11]="n1 n9" [12]="n5 n10" [13]="n2 n13" [14]="n6 n14")
# Their time limit passed (it ended 0.2 s after the start; they still run).
drifting "--end-in 0.2" 20
echo "ended: $LINE"
echo "$LINE" | grep -q 'members=4 not formed: .* running free costs them 0.0 % (4 as their bursts stand)' ||
    fail "rings past their end were weighed beyond it: $LINE"
# No limit: their next twenty periods.
drifting "" 30
echo "no limit: $LINE"
for j in 31 32 33 34; do
    grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j, with time left, joined no family"
done
# At one phase they meet on every burst: a family would save them that, but
# past their end (a period left) the waits for their windows' first slots
# cost more (PhaseGroupOptions::charge_waits).
drifting "--end-in 0.2" 40 0.2 0.0
echo "one phase, ended: $LINE"
echo "$LINE" | grep -Eq 'members=4 not formed: it would stretch them [0-9.]+ % and its first slots [0-9.]+ %' ||
    fail "rings past their end formed a family whose first slots cost more than it saves: $LINE"
echo PASS
