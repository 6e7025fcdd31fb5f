#!/bin/sh
# Golden scenarios: harmonics-plan on each testsuite/golden/NAME.plan must
# print exactly NAME.expected. Usage: run-golden.sh SRCDIR BUILDDIR NAME
set -u
src=$1 build=$2 name=$3
plan=$build/src/sim/harmonics-plan
[ -x "$plan" ] || { echo "no $plan (build src/sim first)"; exit 1; }
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
timeout 60 "$plan" "$src/testsuite/golden/$name.plan" >"$out" || { echo "harmonics-plan failed"; exit 1; }
diff -u "$src/testsuite/golden/$name.expected" "$out"
