#!/bin/sh
# run-with-schedd.sh MODE HARNESS ARGS...: runs the NCCL harness against a
# scripted schedd in MODE (ok, die, phases, garbage, hang) or none (nothing listens),
# with a private munged, temp dir and port; everything is stopped on exit and
# every wait is bounded. Extra environment (HARMONICS_GATE, LD_LIBRARY_PATH,
# NCCL_PROFILER_PLUGIN) comes from the caller. With USE_CONF=1 the plugin
# finds schedd, munged and its settings through a harmonics.conf (this node
# under leaf1, whose Schedd= is the scripted schedd) instead of HARMONICS_*.
set -u
MODE=$1
shift
SCHEDD=${SCRIPTED_SCHEDD:-$(dirname "$1")/scripted-schedd}
T_PREFIX=harmonics-nccl
. "$(dirname "$0")/private-munged.sh"

export HARMONICS_MUNGE_SOCKET="$T/munge.sock"
if [ "$MODE" = none ]; then
  PORT=1  # nothing listens on tcpmux: connection refused
else
  "$SCHEDD" "$MODE" "$T/port" "$T/schedule" 4242 40 &
  SCHEDD_PID=$!
  wait_for "$T/port" || { echo "scripted schedd did not start"; exit 1; }
  PORT=$(cat "$T/port")
fi

# Bursts: the harness's two back-to-back collectives stay one burst even when
# a loaded CI node delays the second by a few ms; compute phases are >= 7 ms.
export SLURM_JOB_ID=4242 HARMONICS_TRACE="$T/trace.jsonl" HARMONICS_TEST_SCHEDULE_FILE="$T/schedule" \
  HARMONICS_SCHEDD_TIMEOUT_MS=500 HARMONICS_BURST_GAP_US=5000
if [ "${USE_CONF:-0}" = 1 ]; then
  printf 'SwitchName=leaf1 Nodes=%s\nSwitchName=top Switches=leaf1\n' "$(hostname -s)" > "$T/topology.conf"
  printf 'TopologyFile=topology.conf\nSwitchName=leaf1 Schedd=127.0.0.1:%s\nMungeSocket=%s\nReportInterval=50ms ClockTolerance=50us\n' \
    "$PORT" "$T/munge.sock" > "$T/harmonics.conf"
  export HARMONICS_CONF="$T/harmonics.conf"
  unset HARMONICS_MUNGE_SOCKET
else
  export HARMONICS_SCHEDD=127.0.0.1:$PORT HARMONICS_REPORT_MS=50
fi
"$@"
RC=$?
if [ "$MODE" = ok ] || [ "$MODE" = die ] || [ "$MODE" = phases ]; then
  # It exits by itself once the hook hung up; give it 5 s.
  i=0
  while kill -0 "$SCHEDD_PID" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  kill "$SCHEDD_PID" 2>/dev/null
  wait "$SCHEDD_PID"
  SRC=$?
  SCHEDD_PID=
  if [ $SRC -ne 0 ]; then echo "scripted schedd failed ($SRC)"; RC=1; fi
fi
exit $RC
