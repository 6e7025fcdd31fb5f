#!/usr/bin/env bash
# Four rings across both leaves, every job holding, on the EMULATED testbed
# (contrib/demo/lock-workload.csv; doc/testbed.md, "Four rings, all
# holding"). rack1 plans every gated job it sees, so it takes a plan whose
# collisions fit 0.9 of the jobs' slack (LocalTuning::take_margin), doubts
# one within the whole slack, and the decisions carry 1.0 to rack2's reports
# and coordd's hand-over check.
# With the coordinator checking 0.8 instead, coordd handed a ring to rack2
# and the plan ran late (+5.7 %); at 0.8 everywhere all four ran free.
# Asserts that Harmonics lowers the mean iteration and communication times,
# that the owner gated at least three of the four rings, that coordd handed
# no gated ring over for its slack, and that no gated ring went back to free
# while every job ran.
# Not asserted: the demo's 10 % agreement with harmonics-sim. The simulator
# decides on the models' exact profiles, where BERT-base's predicted delay is
# 0.89 of its slack against the 0.9 the plan is held to; the leaf decides on
# measured ones, which fall either side. Past 0.9 the plan is doubted (stop
# 34); a drift plan that then won ran 5-13 % behind the simulator, until stop
# 35's slack rule refused plans that miss slots iteration by iteration. The
# agreement is printed.
# Not in CTest (testsuite/system/tests.cmake): it failed the clean-clone CI of
# acef196; stop 35's runs are in doc/testbed.md, "Stop 35" (one failure, a
# phase family with an ownerless job, fixed in coordd). A plan doubted at
# three rings may still gate the ViT-B/16 on the drift plan and free it when
# the fourth ring arrives, which the flip assertion below counts. Run it by
# hand.
#   demo-all-holding.sh SRCDIR BUILDDIR      (exit 77: Slurm or a part not built)
set -uo pipefail
SRCDIR=$(cd "$1" && pwd)
BUILDDIR=$(cd "$2" && pwd)
. "$SRCDIR/testsuite/system/e2e/lib.sh"
need_demo "$BUILDDIR"
WORK=$BUILDDIR/testsuite/e2e-demo-all-holding
"$SRCDIR/contrib/demo/run" --build "$BUILDDIR" --work "$WORK" --workload "$SRCDIR/contrib/demo/lock-workload.csv" \
  --oversubscription 2.5 --timeout 240 || exit 1

fail() { echo "FAIL: $*"; exit 1; }
summary=$(grep '^summary ' "$WORK/results/summary.txt") || fail "no summary in $WORK/results/summary.txt"
echo "$summary"
awk '{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] } }
     END { exit !(v["it_on"] < v["it_off"] && v["comm_on"] < v["comm_off"]) }' <<<"$summary" ||
  fail "Harmonics did not lower the mean iteration and communication times"
ids=$(awk '{ printf "%s%s", sep, $2; sep = "|" }' "$WORK/runs/on/jobs.txt")
[ -n "$ids" ] || fail "no Slurm ids in $WORK/runs/on/jobs.txt"
# The owners' decisions, in time order (a non-owner logs "owner's").
decisions=$(grep -hE "job ($ids): (free|gated) shift.*decided here" "$WORK"/log/schedd-rack*.log | sort)
gated=$(grep ": gated shift" <<<"$decisions" | sed -E 's/.*job ([0-9]+):.*/\1/' | sort -u | wc -l)
[ "$gated" -ge 3 ] || fail "$gated of the four rings gated: $(tail -n 4 <<<"$decisions")"
if grep -E "job ($ids): collisions on leaf .* slack" "$WORK/log/coordd.log"; then
  fail "coordd moved a gated ring for its collisions on the other leaf"
fi
first_end=$(grep -hE "job ($ids) ended \(" "$WORK/log/coordd.log" | head -n 1 | cut -d' ' -f1)
[ -n "$first_end" ] || fail "coordd logged no end of the jobs $ids"
first_end=$(date -d "@$(($(date -d "${first_end/T/ }" +%s) - 2))" +%Y-%m-%dT%H:%M:%S)
flips=$(awk -v t="$first_end" '$1 < t && /: free shift/ { split($0, f, "job "); split(f[2], g, ":"); if (g[1] in seen) n++ }
                               /: gated shift/ { split($0, f, "job "); split(f[2], g, ":"); seen[g[1]] = 1 }
                               END { print n + 0 }' <<<"$decisions")
[ "$flips" -eq 0 ] || fail "a gated ring went back to free $flips times while every job ran"
echo PASS
