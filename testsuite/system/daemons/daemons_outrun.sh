#!/bin/bash
# A gated job whose iterations keep running past the period its owner gave
# it misses its slot and waits for the next one, iteration after iteration
# (two unrelated models on the same leaves: a vgg16 ring gated at 169 ms
# iterated at 184 ms and ran at 251 ms where fair sharing gave it 200 ms;
# doc/scale.md, "Stop 36"). Jobs 1 and 2 cross rack1 and rack2, each 60 ms
# of the whole uplink in a 200 ms iteration, so their owner gates them
# apart; job 2's hooks then report 240 ms iterations (their collective
# stretched to 100 ms by collisions the plan does not see). After three
# epochs and ten periods of that under one schedule its owner runs it free for 30 epochs
# (FreeOutrunning=yes, the default) and says why; job 1 stays as planned.
# Meanwhile harmonicsctl shows why job 2 runs free, and coordd's log says so.
# Then the same with jobs 3 and 4, and job 4's owner schedd is killed (-9)
# mid-hold and restarted: it learns the hold back from coordd, and job 4's
# new hooks there get no gate till it ends (before stop 37 the restarted
# schedd gated it at once). With FREE_OUTRUNNING=no job 2 stays gated and
# the test fails.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
PHASE_GROUPS=no start_two_leaves

"$HX_CLIENT" notify "$T/coordd.sock" --jobs 1 --job-uid 0 --nodes "n1,n5" >/dev/null || fail "notify job 1"
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 2 --job-uid 0 --nodes "n2,n6" >/dev/null || fail "notify job 2"
hook() {   # hook JOB NODE RANK_BASE PORT OUT PERIOD PHASE_DURATION [OPTIONS]
    "$HX_CLIENT" hooks 127.0.0.1:$4 --jobs $1 --ranks 1 --rank-base $3 --node $2 --nnodes 2 --duration 8 --history \
        --period $6 --phase-off 0.14 --phase-dur $7 --phase-bytes 0.75e9 "${@:8}" > "$5"
}
hook 1 n1 0 $P1 "$T/h1-a.out" 0.2 0.06 & H1=$!
hook 1 n5 1 $P2 "$T/h1-b.out" 0.2 0.06 & H2=$!
hook 2 n2 0 $P1 "$T/h2-a.out" 0.24 0.10 & H3=$!
hook 2 n6 1 $P2 "$T/h2-b.out" 0.24 0.10 & H4=$!
# While its owner holds job 2 free, coordd knows it and why.
shows_outran() { ctl show job "$1" | grep -q 'Outran=yes'; }
WAIT_S=8 wait_for shows_outran 2 ||
    fail "harmonicsctl never showed job 2 outran: $(ctl show job 2)"
ctl show job 2 | grep -Eq 'Owner=rack[12] Outran=yes FreeFor=[1-6]s$' || fail "harmonicsctl: $(ctl show job 2)"
ctl --json show job 2 | grep -Eq '"holds":true,"outran_for_s":[1-6]\.[0-9],"gated":false' ||
    fail "harmonicsctl --json: $(ctl --json show job 2)"
ctl show job 1 | grep -q 'Outran' && fail "harmonicsctl shows job 1 outran: $(ctl show job 1)"
ctl --json show job 1 | grep -q '"outran_for_s":0.0,' || fail "harmonicsctl --json, job 1: $(ctl --json show job 1)"
grep -Eq 'job 2: leaf rack[12] runs it free for [56] s: gated, it kept iterating past its period' "$T/coordd.log" ||
    fail "coordd's log does not say why job 2 runs free"
for h in $H1 $H2 $H3 $H4; do wait $h || { cat "$T"/h*.out; fail "some hooks got no schedule"; }; done
grep -h '^SCHED' "$T"/h2-a.out

grep -h 'job 2: gated at period' "$T"/schedd-rack*.log ||
    fail "no schedd ran job 2 free for outrunning its period"
grep -Eq 'job 2: gated at period 0\.2[0-9]* s it iterated at 0\.2[34][0-9]* s .* for 3 epochs and 10 periods: it misses its slots; running free for 6 s' \
    "$T"/schedd-rack*.log || fail "the schedd's reason for running job 2 free is not the one expected"
grep -q 'job 1: gated at period' "$T"/schedd-rack*.log && fail "job 1, within its period, was run free"
for f in h2-a h2-b; do
    grep -q '^SCHED job=2 gated=1' "$T/$f.out" || fail "$f: job 2 was never gated"
    [ "$(grep '^SCHED job=2 ' "$T/$f.out" | tail -n 1 | cut -d' ' -f3)" = gated=0 ] ||
        fail "$f: job 2 does not end free: $(grep '^SCHED job=2 ' "$T/$f.out" | tail -n 1)"
done
grep -q '^SCHED job=1 gated=1' "$T/h1-a.out" || fail "job 1 was never gated"

# The other leaf keeps the owner's hold too (coordd passed it on).
grep -Eq 'job 2: runs free for [0-9]+ s more: gated, it kept iterating past its period \(leaf rack[12], via coordd\)' \
    "$T"/schedd-rack*.log || fail "job 2's other leaf did not learn its hold"

# A schedd restarted mid-hold keeps it. Jobs 1 and 2 end first.
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 1,2 --state end >/dev/null || fail "notify the end of jobs 1 and 2"
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 3 --job-uid 0 --nodes "n3,n7" >/dev/null || fail "notify job 3"
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 4 --job-uid 0 --nodes "n4,n8" >/dev/null || fail "notify job 4"
hook 3 n3 0 $P1 "$T/h3-a.out" 0.2 0.06 & H1=$!
hook 3 n7 1 $P2 "$T/h3-b.out" 0.2 0.06 & H2=$!
hook 4 n4 0 $P1 "$T/h4-a.out" 0.24 0.10 & H3=$!
hook 4 n8 1 $P2 "$T/h4-b.out" 0.24 0.10 & H4=$!
WAIT_S=8 wait_for shows_outran 4 || fail "harmonicsctl never showed job 4 outran: $(ctl show job 4)"
OWNER=$(ctl show job 4 | grep -o 'Owner=rack[12]' | cut -d= -f2)
[ -n "$OWNER" ] || fail "job 4 has no owner leaf: $(ctl show job 4)"
PID=SCHEDD_PID_$OWNER
kill -9 "${!PID}"
wait "${!PID}" 2>/dev/null
# Its hooks end CLOSED; the other leaf's report on.
if [ "$OWNER" = rack1 ]; then wait $H1 $H3; else wait $H2 $H4; fi
start_schedd "$OWNER"
WAIT_S=10 wait_for leaves_connected 2 || fail "the restarted schedd of $OWNER did not register"
PORT=$P1 NODE3=n3 NODE4=n4
[ "$OWNER" = rack2 ] && PORT=$P2 NODE3=n7 NODE4=n8
# Jobs 3 and 4 both again on the restarted leaf: without the hold, its
# first decision gates job 4 apart from job 3 (checked).
hook 3 $NODE3 2 $PORT "$T/h3-again.out" 0.2 0.06 --duration 2.5 & H1=$!
hook 4 $NODE4 3 $PORT "$T/h4-again.out" 0.24 0.10 --duration 2.5 & H2=$!
wait $H1 && wait $H2 || fail "hooks after the restart got no schedule: $(cat "$T"/h[34]-again.out)"
grep -Eq "job 4: runs free for [0-9]+ s more: gated, it kept iterating past its period \(leaf $OWNER, via coordd\)" \
    "$T/schedd-$OWNER.log" || fail "the restarted schedd of $OWNER did not learn job 4's hold"
grep -q '^SCHED job=4 gated=1' "$T/h4-again.out" && fail "the restarted schedd gated job 4 mid-hold: $(cat "$T/h4-again.out")"
grep -q '^SCHED job=4 gated=0' "$T/h4-again.out" || fail "job 4's hooks got no free schedule: $(cat "$T/h4-again.out")"
echo PASS
