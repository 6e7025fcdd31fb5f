#!/bin/bash
# The jobs of daemons.adopt, but job 3's hooks only measure: they report that
# they do not hold their collectives (a node with Gate=no, no cuda gate, or
# no pause that opens an iteration). Harmonics must plan around it as the
# free job it is: coordd runs it free on every leaf, rack3 does not ask for
# it (in daemons.adopt it does, and gates it), it joins no phase family, and
# its hooks get no gated schedule; jobs 1 and 2 stay packed apart on rack1.
# When its hooks say they hold again, it may be gated again.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
PHASE_GROUPS=no start_four_leaves

adopt_jobs
PHASE[3]+=" --no-hold"
run_two_node_jobs 8

grep -Eq 'job 3: ranks on leaf rack[23](,rack[23])? do not hold their collectives .*runs free on every leaf' "$T/coordd.log" ||
    fail "coordd never said job 3 does not hold its collectives"
grep -q 'job 3: rank [01] does not hold its collectives (measuring only): planned as running free' "$T/schedd-rack3.log" ||
    fail "rack3's schedd never said job 3 does not hold"
grep -q 'job 3: .* owns it now' "$T/coordd.log" && fail "coordd handed job 3, which does not hold, to another leaf"
grep -q 'job 3 runs free here .* asking to own it' "$T/schedd-rack3.log" && fail "rack3 asked for job 3, which does not hold"
grep -q 'job 3 joins a phase family' "$T/coordd.log" && fail "job 3 joined a phase family"
ctl show job 3 | grep -q 'State=measuring' || fail "harmonicsctl: $(ctl show job 3)"
ctl show job 3 | grep -q 'RunFree=yes Holds=no' || fail "harmonicsctl does not show job 3 as not holding: $(ctl show job 3)"
ctl --json show job 3 | grep -q '"run_free":true,"handed_over":false,"holds":false' ||
    fail "harmonicsctl --json: $(ctl --json show job 3)"
ctl --json show job 1 | grep -q '"holds":true' || fail "harmonicsctl --json, job 1: $(ctl --json show job 1)"
never_gated 3
apart 1 2 0.025
for j in 1 2; do settled $j 3; done

# Its hooks are gone, and the schedds keep their last word: a coordd killed
# (-9) and restarted learns from them that job 3 does not hold.
restart_coordd
ctl show job 3 | grep -q 'RunFree=yes Holds=no' || fail "after a coordd restart: $(ctl show job 3)"
grep -q 'job 3: every rank holds' "$T"/coordd*.log "$T"/schedd-*.log && fail "job 3 was taken to hold once its hooks left"

# The same job's hooks holding again: it may be gated again, and is (rack3
# adopts it as in daemons.adopt, and gates it between jobs 1 and 2).
"$HX_CLIENT" hooks 127.0.0.1:$P2 --jobs 3 --ranks 1 --node n5 --nnodes 2 --duration 4 \
    --period 0.1 --phase-off 0.075 --phase-dur 0.025 --phase-bytes 0.3125e9 > "$T/h3-again.out" &
H=$!
"$HX_CLIENT" hooks 127.0.0.1:$P3 --jobs 3 --ranks 1 --rank-base 1 --node n11 --nnodes 2 --duration 4 \
    --period 0.1 --phase-off 0.075 --phase-dur 0.025 --phase-bytes 0.3125e9 > "$T/h3-again-b.out" &
H2=$!
wait $H $H2
grep -q 'job 3: every rank holds its collectives again' "$T/coordd.log" || fail "coordd never saw job 3 hold again"
ctl --json show job 3 | grep -q '"run_free":false,"handed_over":[a-z]*,"holds":true' ||
    fail "after job 3 holds again, harmonicsctl --json: $(ctl --json show job 3)"
grep -q '^JOB 3 gated=1' "$T/h3-again.out" || fail "job 3 holding again was not gated: $(grep '^JOB 3 ' "$T/h3-again.out")"
echo PASS
