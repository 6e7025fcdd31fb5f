#!/bin/bash
# Benchmark of one harmonics-schedd (not a test; prints numbers):
#   testsuite/system/daemons/bench-schedd.sh SRC BUILD [JOBS RANKS SECONDS PERIODS]
# Starts a private munged and coordd, announces JOBS cross-leaf jobs (4 nodes
# in rack1 + 4 in rack2 each), then runs harmonics-bench-schedd: the rack1
# schedd on CPU 0, JOBS x RANKS hooks reporting as fast as they can on CPU 1.
SRC=$1 BUILD=$2 JOBS=${3:-64} RANKS=${4:-8} SECS=${5:-5} PERIODS=${6:-1}
. "$SRC/testsuite/system/daemons/lib.sh"
BENCH=$BUILD/src/sched/harmonics-bench-schedd
start_munged
LOGLEVEL=warning EPOCH=${EPOCH:-100ms} write_conf
# 32 nodes per leaf for 64 jobs.
cat > "$T/topology.conf" <<EOT
SwitchName=rack1 Nodes=n[1-32]
SwitchName=rack2 Nodes=n[33-64]
SwitchName=spine Switches=rack[1-2]
EOT
start_coordd
for j in $(seq 0 $((JOBS - 1))); do
    a=$(( (j * 4) % 32 + 1 )); b=$(( a + 32 ))
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs $((1000 + j)) --job-uid 0 \
        --nodes "n[$a-$((a + 3)),$b-$((b + 3))]" >/dev/null || fail "notify $j"
done
# Bounded: a runaway policy must not take the machine down with it.
ulimit -v 8000000
timeout -k 5 $((SECS + 60)) "$BENCH" --config "$T/harmonics.conf" --leaf rack1 --jobs "$JOBS" --ranks "$RANKS" --duration "$SECS" \
    --periods "$PERIODS"
