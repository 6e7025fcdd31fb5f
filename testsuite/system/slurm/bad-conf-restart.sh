#!/usr/bin/env bash
# A bad harmonics.conf makes job_submit/harmonics fail open with a log line
# naming file, line and key; slurmctld restarts keep running jobs, their
# placement and AdminComment, and steering comes back with a good config.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
CONF=$CLUSTER/etc/harmonics.conf
restore() { cp "$CONF.good" "$CONF"; }
trap restore EXIT
cancel_all
write_summary 1 1
long=$(submit -N3 --exclusive --wrap 'sleep 20') || fail "sbatch"
poll 30 "job $long running" job_state_is "$long" RUNNING
nodes=$(job_field "$long" NodeList)
comment=$(scontrol show job "$long" | sed -n 's/^ *AdminComment=//p')

{ cat "$CONF.good"; echo "SwitchWait=forever"; } > "$CONF"
line=$(wc -l < "$CONF")
from=$(($(wc -l < "$CTLD_LOG") + 1))
"$MC/restart-ctld" "$CLUSTER" || fail "slurmctld restart with a bad harmonics.conf"
tail -n +"$from" "$CTLD_LOG" | grep "job_submit/harmonics: $CONF:$line: .*SwitchWait.*fail open" ||
  fail "no fail-open log line naming $CONF:$line and SwitchWait"
j=$(submit -N3 --exclusive --wrap 'sleep 1') || fail "sbatch with a bad harmonics.conf"
poll 40 "job $j to complete" job_state_is "$j" COMPLETED
scontrol show job "$j" | grep -q "AdminComment=harmonics" && fail "job $j steered with a bad config"
[ "$(job_field "$long" NodeList)" = "$nodes" ] || fail "job $long moved: $(job_field "$long" NodeList)"

restore
from=$(($(wc -l < "$CTLD_LOG") + 1))
"$MC/restart-ctld" "$CLUSTER" || fail "slurmctld restart with the good harmonics.conf"
tail -n +"$from" "$CTLD_LOG" | grep -q "job_submit/harmonics: $CONF loaded" || fail "config not loaded after restart"
job_state_is "$long" RUNNING COMPLETED || fail "job $long is $(job_field "$long" JobState) after two restarts"
[ "$(job_field "$long" NodeList)" = "$nodes" ] || fail "job $long moved: $(job_field "$long" NodeList)"
[ "$(scontrol show job "$long" | sed -n 's/^ *AdminComment=//p')" = "$comment" ] || fail "job $long lost its AdminComment"
s=$(submit -N3 --exclusive --wrap 'sleep 1') || fail "sbatch"
poll 40 "job $s running" job_state_is "$s" RUNNING COMPLETED
scontrol show job "$s" | grep -q "AdminComment=harmonics-steer" || fail "steering did not come back after restart"
poll 40 "job $long to complete" job_state_is "$long" COMPLETED
