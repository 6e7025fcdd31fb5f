#!/usr/bin/env bash
# The lock plan on the EMULATED testbed (doc/testbed.md, "A job that only
# measures"): contrib/demo/lock-workload.csv, four rings across both leaves'
# 200 Gb/s uplinks, job 4 (BERT-base) with HARMONICS_GATE=off. Asserts what
# the demo's --check does (Harmonics lowers the mean iteration and
# communication times; every job within 10% of harmonics-sim, which is told
# job 4 only measures), and that the job was what the lock plan makes of it:
# its ranks reported they do not hold, its owner's schedd decided it locked,
# and it stayed locked while the gated jobs ran.
#   demo-lock.sh SRCDIR BUILDDIR      (exit 77: Slurm or a part not built)
set -uo pipefail
SRCDIR=$(cd "$1" && pwd)
BUILDDIR=$(cd "$2" && pwd)
. "$SRCDIR/testsuite/system/e2e/lib.sh"
need_demo "$BUILDDIR"
WORK=$BUILDDIR/testsuite/e2e-demo-lock
"$SRCDIR/contrib/demo/run" --build "$BUILDDIR" --work "$WORK" --workload "$SRCDIR/contrib/demo/lock-workload.csv" \
  --measuring 4 --oversubscription 2.5 --timeout 240 --check --agree 10 || exit 1

fail() { echo "FAIL: $*"; exit 1; }
jid=$(awk '$1 == 4 { print $2 }' "$WORK/runs/on/jobs.txt")
[ -n "$jid" ] || fail "no Slurm id for workload job 4 in $WORK/runs/on/jobs.txt"
grep -q "job $jid: ranks on leaf .* do not hold their collectives" "$WORK/log/coordd.log" ||
  fail "coordd never heard that job $jid's ranks do not hold"
# The owner's decisions for the measuring job, in order (the other leaf logs "owner's").
decisions=$(grep -h "job $jid: \(locked\|free\|gated\) shift.*decided here" "$WORK"/log/schedd-rack*.log | sort)
locked=$(grep -c ": locked shift" <<<"$decisions")
[ "$locked" -ge 1 ] || fail "job $jid was never locked: $(tail -n 2 <<<"$decisions")"
grep -q ": gated shift" <<<"$decisions" && fail "job $jid was gated: $(grep ': gated shift' <<<"$decisions" | head -n 1)"
# Locked while every job ran: no flip back to free before the first job's
# end (2 s before coordd heard of it: its ranks stop reporting first).
ids=$(awk '{ printf "%s%s", sep, $2; sep = "|" }' "$WORK/runs/on/jobs.txt")
first_end=$(grep -hE "job ($ids) ended \(" "$WORK/log/coordd.log" | head -n 1 | cut -d' ' -f1)
[ -n "$first_end" ] || fail "coordd logged no end of the jobs $ids"
first_end=$(date -d "@$(($(date -d "${first_end/T/ }" +%s) - 2))" +%Y-%m-%dT%H:%M:%S)
flips=$(awk -v t="$first_end" '$1 < t && /: free shift/ && seen { n++ } /: locked shift/ { seen = 1 } END { print n + 0 }' <<<"$decisions")
[ "$flips" -eq 0 ] || fail "job $jid went from locked to free $flips times while every job ran"
echo PASS
