#!/bin/bash
# kill -9 coordd while hooks report: the schedds keep serving (a job arriving
# meanwhile is scheduled), and the restarted coordd rebuilds its table from
# the schedds' re-registration with the same owners and shifts.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_two_leaves
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 100-115 --job-uid 0 --nodes 'n[1-2]' >/dev/null || fail notify
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 300,301 --job-uid 0 --nodes 'n[3-4,7-8]' >/dev/null || fail notify

# Load: 16 leaf-local jobs x 4 ranks on rack1 plus the two cross-leaf jobs.
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 100-115 --ranks 4 --node n1 --nnodes 1 --duration 14 > "$T/h0.out" &
H0=$!
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 300,301 --ranks 4 --node n3 --nnodes 4 --duration 14 --history \
    "${CROSS_PHASE[@]}" > "$T/h1.out" &
H1=$!
"$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs 300,301 --ranks 4 --rank-base 8 --node n7 --nnodes 4 --duration 14 --history \
    "${CROSS_PHASE[@]}" > "$T/h2.out" &
H2=$!
gated_both() { [ "$(ctl show schedule | grep -c 'Gated=yes')" = 2 ]; }
WAIT_S=8 wait_for gated_both || fail "cross-leaf jobs not scheduled before the crash"
before=$(ctl show schedule | grep -E '^JobId=30[01] ' | sed 's/ Epoch=.*//')
echo "before: $before"

kill -KILL "$COORDD_PID"
wait "$COORDD_PID" 2>/dev/null
wait_for grep -q 'coordd connection lost' "$T/schedd-rack1.log" || fail "rack1 did not notice coordd leaving"
# While coordd is away a new job arrives on rack1 and is still scheduled.
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 120 --ranks 2 --node n2 --duration 10 --print-first > "$T/h3.out" &
H3=$!
WAIT_S=5 wait_for grep -q '^FIRST job=120' "$T/h3.out" || fail "schedd did not serve a new job while coordd was down"
sleep 1

start_coordd
WAIT_S=15 wait_for leaves_connected 2 || fail "schedds did not re-register after the restart"
WAIT_S=5 wait_for gated_both || fail "schedule not rebuilt"
after=$(ctl show schedule | grep -E '^JobId=30[01] ' | sed 's/ Epoch=.*//')
echo "after: $after"
[ "$before" = "$after" ] || fail "schedule changed across the coordd restart: '$before' -> '$after'"
ctl show jobs | grep -c '^JobId=' > "$T/njobs"
[ "$(cat "$T/njobs")" -ge 19 ] || fail "coordd rebuilt only $(cat "$T/njobs") of 19 jobs"
ctl show job 120 | grep -q 'Leaves=rack1' || fail "job started during the outage unknown after restart"

wait $H0 || { cat "$T/h0.out"; fail "rack1 local hooks were disturbed"; }
wait $H1 || { cat "$T/h1.out"; fail "rack1 hooks were disturbed"; }
wait $H3 || { cat "$T/h3.out"; fail "job 120's hooks were disturbed"; }
wait $H2 || { cat "$T/h2.out"; fail "rack2 hooks were disturbed"; }
for j in 300 301; do
    same_schedule_per_epoch $j "$T/h1.out" "$T/h2.out" || fail "job $j: the schedds pushed different schedules"
done
echo PASS
