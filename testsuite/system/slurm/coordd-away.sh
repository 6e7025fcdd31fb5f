#!/usr/bin/env bash
# With coordd stopped, jobs still submit and run (job_submit fails open on the
# stale summary, prep/harmonics queues its events); when coordd returns, its
# table matches squeue. A slurmctld restart meanwhile changes nothing.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
need_coordd
trap stop_coordd EXIT
cancel_all
write_summary 1 1 600   # what a dead coordd leaves behind: a stale summary
long=$(submit -N3 --exclusive --wrap 'sleep 40') || fail "sbatch without coordd"
short=$(submit -N2 --wrap 'sleep 1') || fail "sbatch without coordd"
poll 30 "job $long running" job_state_is "$long" RUNNING
poll 30 "job $short to complete" job_state_is "$short" COMPLETED
scontrol show job "$long" | grep -q "AdminComment=harmonics" && fail "job $long steered on a stale summary"

"$MC/restart-ctld" "$CLUSTER" || fail "slurmctld restart"
job_state_is "$long" RUNNING || fail "job $long is $(job_field "$long" JobState) after the restart"

start_coordd
poll 30 "coordd's running jobs to match squeue's" tables_match
coordd_jobs | grep -q "^$long " || fail "coordd does not know job $long"
# A slurmctld restart with coordd up: same job, same table.
"$MC/restart-ctld" "$CLUSTER" || fail "slurmctld restart with coordd up"
job_state_is "$long" RUNNING || fail "job $long is $(job_field "$long" JobState) after the restart"
poll 30 "coordd's running jobs to match squeue's after the restart" tables_match
scancel "$long"
long_ended() { coordd_jobs | grep -q "^$long ended"; }
poll 30 "coordd: job $long ended" long_ended
poll 30 "coordd's running jobs to match squeue's after the cancel" tables_match
