#!/usr/bin/env bash
# prep/harmonics tells the real harmonics-coordd about every start and every
# end (completed, failed, cancelled, timed out), and coordd's AdminComment
# shows in `scontrol show job` while a job runs. Slurm's and coordd's view of
# the leaves (scontrol show topology / coordd's leaf summary) agree.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
need_coordd
trap stop_coordd EXIT
cancel_all
from=$(($(wc -l 2>/dev/null < "$COORD_LOG" || echo 0) + 1))
rm -f "$STATE_FILE"
start_coordd
poll 15 "coordd's leaf summary" test -f "$STATE_FILE"
slurm_leaves=$(scontrol show topology | awk '/Level=0/ { n = $1; sub("SwitchName=", "", n)
  for (i = 1; i <= NF; i++) if ($i ~ /^Nodes=/) { sub("Nodes=", "", $i); print n, $i } }' | sort)
coordd_leaves=$(awk '$1 == "leaf" { sub("nodes=", "", $3); print $2, $3 }' "$STATE_FILE" | sort)
[ -n "$slurm_leaves" ] && [ "$slurm_leaves" = "$coordd_leaves" ] ||
  fail "leaves differ: slurm [$slurm_leaves] coordd [$coordd_leaves]"
done_=$(submit -N2 --wrap 'sleep 2') || fail "sbatch"
failed=$(submit -N1 --wrap 'exit 3') || fail "sbatch"
cancelled=$(submit -N1 --wrap 'sleep 120') || fail "sbatch"
timedout=$(submit -N1 --time=1 --wrap 'sleep 300') || fail "sbatch"
extended=$(submit -N1 --time=1 --wrap 'sleep 300') || fail "sbatch"
lifted=$(submit -N1 --time=1 --wrap 'sleep 300') || fail "sbatch"
poll 30 "job $cancelled running" job_state_is "$cancelled" RUNNING
poll 20 "coordd's AdminComment on job $cancelled" sh -c \
  "scontrol show job $cancelled | grep -q 'AdminComment=harmonics:leaves=rack[12] .*state='"
scancel "$cancelled"
seen() { tail -n +"$from" "$COORD_LOG" | grep -q "$1"; }
for j in $done_ $failed $cancelled $timedout $extended $lifted; do
  poll 30 "coordd: job $j started" seen "job $j started (uid 0, nodes n"
done
# A limit moved after the start: coordd has the old end time until it
# passes with the job still running, then asks slurmctld again; one lifted
# is said so, and its end goes from coordd's table (and its leaves').
scontrol update JobId="$extended" TimeLimit=3 || fail "scontrol update TimeLimit"
scontrol update JobId="$lifted" TimeLimit=UNLIMITED || fail "scontrol update TimeLimit=UNLIMITED"
# Slurm's end time travels with the start (the schedds weigh a new gate's
# first wait over it): a one-minute limit ends within the minute, no limit
# is said so; harmonicsctl shows scontrol's EndTime.
seen "job $timedout started (uid 0, nodes n[^,]*, leaves [0-9]*, time limit ends in [1-6]\?[0-9] s)" ||
  fail "coordd: job $timedout's time limit: $(grep "job $timedout started" "$COORD_LOG")"
seen "job $done_ started (uid 0, nodes n[^,]*, leaves [0-9]*, no time limit)" ||
  fail "coordd: job $done_ without a limit: $(grep "job $done_ started" "$COORD_LOG")"
poll 10 "harmonicsctl's EndTime for job $timedout (scontrol's)" ctl_end_time_matches "$timedout"
poll 30 "coordd: job $done_ completed" seen "job $done_ ended (COMPLETED, exit 0)"
poll 30 "coordd: job $failed failed" seen "job $failed ended (FAILED, exit 3)"
poll 30 "coordd: job $cancelled cancelled" seen "job $cancelled ended (CANCELLED"
# Limits are whole minutes and slurmctld checks them about every 30 s.
poll 150 "coordd: job $timedout timed out" seen "job $timedout ended (TIMEOUT"
poll 70 "coordd: job $extended's moved limit" seen "job $extended: time limit ends in [0-9]* s (from slurmctld)"
poll 10 "harmonicsctl's EndTime for job $extended (scontrol's)" ctl_end_time_matches "$extended"
seen "job $extended ended" && fail "coordd: job $extended ended at its old limit"
poll 10 "coordd: job $lifted's lifted limit" seen "job $lifted: no time limit (from slurmctld)"
"$HCTL" -f "$CLUSTER/etc/harmonics.conf" show job "$lifted" | grep -q 'EndTime=' &&
  fail "harmonicsctl: job $lifted has an end time without a limit: $("$HCTL" -f "$CLUSTER/etc/harmonics.conf" show job "$lifted")"
seen "job $lifted ended" && fail "coordd: job $lifted ended at its old limit"
scancel "$extended" "$lifted"
poll 30 "coordd: job $extended cancelled" seen "job $extended ended (CANCELLED"
poll 30 "coordd: job $lifted cancelled" seen "job $lifted ended (CANCELLED"
poll 30 "coordd's running jobs to match squeue's" tables_match
