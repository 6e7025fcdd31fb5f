#!/bin/sh
# contrib/eval/battery-compare on two small battery files in the battery's own
# line format (a harmonics-sim row, bench-harmonics rows, three model pairs):
# the rows that moved and only those, the rows in one run only, the pairs'
# summary (mean, below fair, worst, best, moves), and a clear error for a
# file it cannot read.
# Usage: battery-compare.sh SRCDIR
set -u
src=${1:?usage: battery-compare.sh SRCDIR}
cmp=$src/contrib/eval/battery-compare
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$tmp/out"; exit 1; }

cat >"$tmp/old" <<'ROWS'
testbed-paper fair=1.246/77.9/21.2 harmonics=1.042/48.2/17.7
default fair=1.131/169.1/21.6 harmonics=1.131/169.1/21.6
mix13-2:1 fair@128=43.447/1.0863/0.00 harmonics@128=43.447/1.0863/0.00 fair@1024=46.299/1.1809/0.00 harmonics@1024=46.311/1.1811/7.02
gone-2:1 fair@128=40.000/1.0/0.00 harmonics@128=39.000/1.0/0.00
a+b-2:1 fair@128=40.000/1.0/0.00 harmonics@128=40.400/1.0/0.00
a+c-2:1 fair@128=50.000/1.0/0.00 harmonics@128=49.000/1.0/0.00
b+c-2:1 fair@128=40.000/1.0/0.00 harmonics@128=40.000/1.0/0.00
ROWS
cat >"$tmp/new" <<'ROWS'
testbed-paper fair=1.246/77.9/21.2 harmonics=1.030/47.0/17.0
default fair=1.131/169.1/21.6 harmonics=1.131/169.1/21.6
mix13-2:1 fair@128=43.447/1.0863/0.00 harmonics@128=43.447/1.0863/0.00 fair@1024=46.299/1.1809/0.00 harmonics@1024=46.200/1.1811/7.02
a+b-2:1 fair@128=40.000/1.0/0.00 harmonics@128=40.200/1.0/0.00
a+c-2:1 fair@128=50.000/1.0/0.00 harmonics@128=49.000/1.0/0.00
b+c-2:1 fair@128=40.000/1.0/0.00 harmonics@128=40.800/1.0/0.00
added-2:1 fair@128=40.000/1.0/0.00 harmonics@128=38.000/1.0/0.00
ROWS

"$cmp" "$tmp/old" "$tmp/new" >"$tmp/out" 2>&1 || fail "exit status $?"
# testbed: (21.2 - 17.7) / 21.2 = +16.51 %, then (21.2 - 17.0) / 21.2 = +19.81 %.
grep -Eq '^testbed-paper +sim +\+16\.51 -> +\+19\.81  \(\+3\.30\)$' "$tmp/out" || fail "testbed-paper's move"
grep -Eq '^mix13-2:1 +1024 +-0\.03 -> +\+0\.21  \(\+0\.24\)$' "$tmp/out" || fail "mix13 at 1024 nodes"
grep -q '^mix13-2:1 *128 ' "$tmp/out" && fail "mix13 at 128 nodes did not move"
grep -q '^default ' "$tmp/out" && fail "default did not move"
grep -q '^a+c-2:1 ' "$tmp/out" && fail "a+c did not move"
grep -Eq '^gone-2:1 +128 +only in the old run: \+2\.50$' "$tmp/out" || fail "a row only in the old run"
grep -Eq '^added-2:1 +128 +only in the new run: \+5\.00$' "$tmp/out" || fail "a row only in the new run"
# Pairs: old -1.00, +2.00, 0.00 (mean +0.333); new -0.50, +2.00, -2.00 (mean -0.167).
grep -Fxq 'pairs: 3; mean +0.333 -> -0.167 %; below fair 1 -> 2; below -1 % 0 -> 1' "$tmp/out" || fail "pairs' mean and counts"
grep -Fxq 'pairs: worst -1.00 (a+b-2:1) -> -2.00 (b+c-2:1); best +2.00 (a+c-2:1) -> +2.00 (a+c-2:1); moved up 1, down 1' "$tmp/out" ||
    fail "pairs' worst, best and moves"

"$cmp" "$tmp/old" "$tmp/missing" >"$tmp/out" 2>&1 && fail "a missing file was accepted"
grep -q "battery-compare: $tmp/missing: cannot read" "$tmp/out" || fail "the error names the file"
echo "PASS: battery-compare"
