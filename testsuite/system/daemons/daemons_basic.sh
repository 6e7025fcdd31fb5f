#!/bin/bash
# Two schedds + coordd + scripted hooks on loopback with a real munged:
# reports in, schedules out; each cross-leaf job gets the same schedule from
# both schedds; harmonicsctl shows it; the summary file is published.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_two_leaves

# Slurm says: two leaf-local jobs and two jobs spanning both racks.
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 100 --job-uid 0 --nodes 'n[1-2]' >/dev/null || fail notify
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 200 --job-uid 0 --nodes 'n[5-6]' >/dev/null || fail notify
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 300,301 --job-uid 0 --nodes 'n[3-4,7-8]' >/dev/null || fail notify

# Hooks: rack1 sees 100 and the cross-leaf jobs, rack2 sees 200 and them too.
# Phases of 0.4 GB in 40 ms every 200 ms: the two cross-leaf jobs collide on
# the uplinks unless shifted apart.
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 100 --ranks 2 --node n1 --duration 6 --clock-skew 0.5 > "$T/h0.out" &
H0=$!
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 300,301 --ranks 2 --node n3 --nnodes 4 --duration 6 --history \
    "${CROSS_PHASE[@]}" > "$T/h1.out" &
H1=$!
"$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs 200 --ranks 2 --node n5 --duration 6 > "$T/h3.out" &
H3=$!
"$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs 300,301 --ranks 2 --rank-base 8 --node n7 --nnodes 4 --duration 6 --history \
    "${CROSS_PHASE[@]}" > "$T/h2.out" &
H2=$!
for h in $H0 $H1 $H2 $H3; do wait $h || { cat "$T"/h*.out; fail "some hooks got no schedule"; }; done
grep -h '^JOB' "$T"/h*.out

for j in 300 301; do
    same_schedule_per_epoch $j "$T/h1.out" "$T/h2.out" || fail "job $j: the two schedds pushed different schedules"
    a=$(grep "^JOB $j " "$T/h1.out" | cut -d' ' -f3-)
    case "$a" in gated=1*) ;; *) fail "cross-leaf job $j under contention is not gated: $a" ;; esac
done
s300=$(grep "^JOB 300 " "$T/h1.out" | sed 's/.*shift=\([^ ]*\).*/\1/')
s301=$(grep "^JOB 301 " "$T/h1.out" | sed 's/.*shift=\([^ ]*\).*/\1/')
[ "$s300" != "$s301" ] || fail "colliding jobs 300 and 301 got the same shift $s300"

# The hooks measure their clock against the schedd's at the hello (HelloAck's
# server time): job 100's say they run 500 ms ahead and are warned about.
grep -Eq 'warning: job 100 rank [01]: clock (49[0-9]|50[0-9])\.[0-9]+ ms off' "$T/schedd-rack1.log" ||
    fail "no warning for job 100's skewed clock"
grep -Eq 'job 300 rank [0-9]+: clock (offset )?-?[0-9]\.[0-9]+ ms' "$T/schedd-rack1.log" ||
    fail "no clock offset (or one of 10 ms or more) from job 300's hooks on one host"

ctl show jobs
ctl show job 300 | grep -q 'Leaves=rack1,rack2' || fail "show job 300 lacks both leaves"
ctl show schedule | grep -q '^JobId=301 .*Gated=yes' || fail "show schedule lacks job 301"
ctl --json show leaves | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d)==2 and all(l["connected"] for l in d), d' \
    || fail "show leaves --json"
ctl ping | grep -q '^Status=up' || fail "ping"
grep -q '^leaf rack1 ' "$T/leaves.state" || fail "summary file not written"

# Job end: coordd tells the schedds, which forget the job.
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 300 --state end --job-uid 0 --nodes 'n[3-4,7-8]' >/dev/null || fail notify end
wait_for grep -q 'job 300 ended' "$T/schedd-rack1.log" || fail "rack1 not told job 300 ended"
wait_for grep -q 'job 300 ended' "$T/schedd-rack2.log" || fail "rack2 not told job 300 ended"
echo PASS
