#!/bin/bash
# Three rings between rack1 and rack3, 25 ms of every 100 ms at the whole
# uplink; job 3's hooks only measure (they never hold). Planned 1 % over
# their T, jobs 1 and 2 would be delayed past their slack by job 3's
# collisions, which nobody can move: the Local Scheduler takes the absorbing
# plan instead of leaving everyone free (LocalTuning::absorb_measuring). The
# owner's schedd says so; 1 and 2 end gated apart on a period long enough to
# absorb job 3 (about 107 ms; the 1 % guard alone gives 101), job 3 free.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
PHASE_GROUPS=no start_four_leaves

declare -gA NODES=([1]="n1 n9" [2]="n2 n10" [3]="n3 n11") PHASE=()
for j in 1 2 3; do PHASE[$j]="--period 0.1 --phase-off 0.075 --phase-dur 0.025 --phase-bytes 0.3125e9"; done
PHASE[3]+=" --no-hold"
run_two_node_jobs 8

grep -Eq 'job [12]: gated .*decided here; .*; absorbing [0-9.]+ \(stretch [0-9.]+(, kept)?\) chosen' \
    "$T"/schedd-rack1.log "$T"/schedd-rack3.log ||
    fail "no owner took the absorbing plan: $(grep -h 'job [12]: ' "$T"/schedd-rack[13].log | tail -n 4)"
grep -q '^JOB 3 gated=0' "$T/h3-a.out" || fail "job 3, which does not hold, was gated: $(grep '^JOB 3 ' "$T/h3-a.out")"
apart 1 2 0.025
for j in 1 2; do
    python3 - "$(grep "^JOB $j " "$T/h$j-a.out")" <<'PY' || fail "job $j's period does not absorb job 3: $(grep "^JOB $j " "$T/h$j-a.out")"
import sys
p = float(sys.argv[1].split("period=")[1].split()[0])
sys.exit(0 if 0.103 <= p <= 0.115 else 1)
PY
    settled $j 3
done
echo PASS
