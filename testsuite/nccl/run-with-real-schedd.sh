#!/bin/sh
# run-with-real-schedd.sh BUILD_DIR HARNESS: the real harmonics-schedd (one
# leaf, --coord none) with a private munged, and two jobs whose hooks (two
# harness processes, one per job) report through it. Both say they span two
# nodes and only one reports here, so to this leaf both run on another leaf
# too: cross-leaf jobs, which without coordd (--coord none) have no owner and
# run free (one leaf alone must not gate a job other leaves carry). The test
# checks what the hooks and schedd exchange: periods learnt, clock offsets,
# a schedule for each job that the hook applies. Gating against a real schedd
# is covered with coordd by the daemons and e2e tests. Exit 77 when
# harmonics-schedd is not built.
set -u
BUILD=$1
HARNESS=$2
SCHEDD=$BUILD/src/sched/harmonics-schedd
[ -x "$SCHEDD" ] || { echo "SKIP: $SCHEDD not built"; exit 77; }
T_PREFIX=harmonics-nccl-real
. "$(dirname "$0")/private-munged.sh"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
# The hooks find their leaf as slurmd names them (SLURMD_NODENAME), not by
# this machine's host name.
printf 'SwitchName=rack1 Nodes=n[1-2]\nSwitchName=rack2 Nodes=n[3-4]\nSwitchName=spine Switches=rack[1-2]\n' \
  > "$T/topology.conf"
cat > "$T/harmonics.conf" <<EOT
TopologyFile=topology.conf
NodeBandwidth=100Gbps
Oversubscription=4
SwitchName=rack1 Schedd=127.0.0.1:$PORT
Epoch=200ms
ReportInterval=100ms
ClockTolerance=50us
SlurmUser=$(id -un)
MungeSocket=$T/munge.sock
LogLevel=debug
EOT
"$SCHEDD" -f "$T/harmonics.conf" --leaf rack1 --coord none --log "$T/schedd.log" &
SCHEDD_PID=$!
i=0
until grep -q "listening\|Listening\|listen" "$T/schedd.log" 2>/dev/null || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done

export HARMONICS_CONF="$T/harmonics.conf" HARMONICS_GATE=host
SLURMD_NODENAME=n1 SLURM_JOB_ID=501 HARMONICS_TRACE="$T/trace-501.jsonl" "$HARNESS" real-schedd 501 > "$T/h501.log" 2>&1 &
H1=$!
SLURMD_NODENAME=n2 SLURM_JOB_ID=502 HARMONICS_TRACE="$T/trace-502.jsonl" "$HARNESS" real-schedd 502 > "$T/h502.log" 2>&1 &
H2=$!
RC=0
wait $H1 || RC=1
wait $H2 || RC=1
for f in h501 h502; do echo "--- $f"; grep -v "nccl log 3" "$T/$f.log" | tail -8; done
echo "--- schedd"
grep -i "job 50[12]" "$T/schedd.log" | tail -8
# schedd learnt each job's 200 ms rhythm from the hooks' reports.
for j in 501 502; do
  grep -Eq "job $j arrived \(period (19[6-9]|20[0-4])\." "$T/schedd.log" || { echo "schedd did not learn job $j's period"; RC=1; }
done
# Cross-leaf with no owner: free, on the word of the one leaf that sees it.
for j in 501 502; do
  grep -q "last schedule: harmonics: schedule for job $j: run free" "$T/h$j.log" || { echo "job $j is not run free"; RC=1; }
done
# The hooks report their clock offset, measured at the hello (HelloAck.server_time_ns).
grep -Eq "job 501 rank [0-9]+: clock (offset )?-?[0-9]+\.[0-9]+ ms" "$T/schedd.log" || { echo "schedd got no clock offset from job 501"; RC=1; }
exit $RC
