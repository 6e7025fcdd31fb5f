#!/usr/bin/env bash
# CTest fixture setup: a private cluster (munged, slurmctld, 8 slurmd in two
# leaves under topology/tree) with the Harmonics plugins loaded from the
# build tree. cluster-down.sh stops it.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_slurm
"$MC/down" "$CLUSTER" --remove   # leftovers of an aborted run
mkdir -p "$CLUSTER/etc" "$CLUSTER/run"
cat > "$CLUSTER/etc/harmonics.conf" <<CONF
# harmonics.conf of the test cluster (testsuite/system/slurm/cluster-up.sh)
TopologyFile=$CLUSTER/etc/topology.conf
StateFile=$STATE_FILE
StateMaxAge=60s
SwitchWait=30s
CoordSocket=$CLUSTER/run/coordd.sock
MungeSocket=$CLUSTER/run/munge.socket
SlurmUser=root
AdminCommentInterval=1s
CONF
cp "$CLUSTER/etc/harmonics.conf" "$CLUSTER/etc/harmonics.conf.good"
args=(--nodes "$NODES" --racks 2 --port-base "$PORT_BASE" --harmonics-conf "$CLUSTER/etc/harmonics.conf"
      --plugin-dir "$(dirname "$JOB_SUBMIT_SO")" --conf-line "JobSubmitPlugins=harmonics")
if [ -f "$PREP_SO" ]; then
  args+=(--plugin-dir "$(dirname "$PREP_SO")" --conf-line "PrEpPlugins=script,harmonics")
fi
"$MC/up" "$CLUSTER" "${args[@]}" || fail "bring-up failed"
grep -q "job_submit/harmonics: .*harmonics.conf loaded" "$CTLD_LOG" || fail "job_submit/harmonics did not load its config"
