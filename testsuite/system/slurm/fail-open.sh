#!/usr/bin/env bash
# Without usable state (stale, missing, malformed) jobs are accepted
# unchanged and run, and slurmctld's log says why in one line per outage.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
cancel_all
from=$(($(wc -l < "$CTLD_LOG") + 1))
new_log() { tail -n +"$from" "$CTLD_LOG"; }
check_untouched_run() {
  local j
  j=$(submit -N3 --exclusive --wrap 'sleep 1') || fail "sbatch"
  poll 30 "job $j to complete" job_state_is "$j" COMPLETED
  scontrol show job "$j" | grep -q "AdminComment=harmonics" && fail "job $j steered on $1 state"
  return 0
}
write_summary 1 1 600
check_untouched_run stale
check_untouched_run stale   # logged once, not per job
n=$(new_log | grep -c "job_submit/harmonics: leaf summary is [0-9]*s old (StateMaxAge 60s) in $STATE_FILE; jobs pass unchanged (fail open)")
[ "$n" = 1 ] || fail "expected one stale-state log line, got $n"
rm -f "$STATE_FILE"
check_untouched_run missing
new_log | grep -q "job_submit/harmonics: $STATE_FILE: No such file or directory; jobs pass unchanged (fail open)" ||
  fail "no log line for the missing state file"
printf 'harmonics-leaf-summary 1\nwritten soon\n' > "$STATE_FILE"
check_untouched_run malformed
new_log | grep -q "job_submit/harmonics: $STATE_FILE:2: written: expected unix seconds; jobs pass unchanged (fail open)" ||
  fail "no log line for the malformed state file"
# Usable again: steering resumes and says so.
write_summary 1 1
j=$(submit -N3 --exclusive --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
scontrol show job "$j" | grep -q "AdminComment=harmonics-steer" || fail "steering did not resume"
new_log | grep -q "job_submit/harmonics: leaf summary $STATE_FILE usable again" || fail "no recovery log line"
