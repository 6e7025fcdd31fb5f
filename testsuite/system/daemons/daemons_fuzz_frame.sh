#!/bin/bash
# Builds the libFuzzer target for the frame decoder (clang only) and runs it
# for a few seconds from the seed corpus; any crash, leak or broken invariant
# fails the test. Skipped (77) without clang++.
SRC=$1 BUILD=$2
command -v clang++ >/dev/null || { echo "SKIP: no clang++"; exit 77; }
make -s -C "$BUILD/testsuite" fuzz/fuzz_frame || { echo "FAIL: fuzz target did not build"; exit 1; }
T=$(mktemp -d /tmp/hx-fuzz.XXXXXX)
trap 'rm -rf "$T"' EXIT
cp "$SRC"/testsuite/fuzz/corpus/* "$T/"
"$BUILD/testsuite/fuzz/fuzz_frame" -max_total_time="${FUZZ_SECONDS:-10}" -timeout=5 -rss_limit_mb=1024 \
    -artifact_prefix="$T/" "$T" > "$T/fuzz.log" 2>&1
rc=$?
tail -n 3 "$T/fuzz.log"
if [ $rc != 0 ]; then
    echo "FAIL: fuzzer found a problem (rc $rc)"
    grep -A20 'ERROR' "$T/fuzz.log" | head -40
    exit 1
fi
grep -q '^Done [0-9]* runs' "$T/fuzz.log" || { echo "FAIL: fuzzer did not run"; exit 1; }
echo PASS
