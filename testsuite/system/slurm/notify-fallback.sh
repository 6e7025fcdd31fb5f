#!/usr/bin/env bash
# harmonics-notify, the PrologSlurmctld/EpilogSlurmctld fallback, run by the
# real slurmctld: coordd hears start and end; with coordd away, or with a bad
# harmonics.conf, jobs still run and the program exits 0 at once.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
NOTIFY=$BUILDDIR/src/plugins/prep/harmonics/harmonics-notify
[ -x "$NOTIFY" ] || skip "harmonics-notify not built"
[ -x "$COORDD" ] || skip "harmonics-coordd not built"
CONF=$CLUSTER/etc/harmonics.conf
# Slurm runs the scripts with a bare environment: a wrapper names the config.
WRAP=$CLUSTER/run/notify-wrapper
printf '#!/bin/sh\nHARMONICS_CONF=%s exec %s "$@"\n' "$CONF" "$NOTIFY" > "$WRAP"
chmod +x "$WRAP"
cleanup() {
  stop_coordd
  cp "$CONF.good" "$CONF"
  [ ! -f "$SLURM_CONF.notify-saved" ] || mv "$SLURM_CONF.notify-saved" "$SLURM_CONF"
  "$MC/restart-ctld" "$CLUSTER" >/dev/null 2>&1
}
trap cleanup EXIT
cancel_all
# Swap prep/harmonics for the scripts.
cp "$SLURM_CONF" "$SLURM_CONF.notify-saved"
sed -i '/^PrEpPlugins=/d' "$SLURM_CONF"
printf 'PrEpPlugins=script\nPrologSlurmctld=%s\nEpilogSlurmctld=%s\n' "$WRAP" "$WRAP" >> "$SLURM_CONF"
"$MC/restart-ctld" "$CLUSTER" || fail "slurmctld restart with PrologSlurmctld"
from=$(($(wc -l 2>/dev/null < "$COORD_LOG" || echo 0) + 1))
start_coordd
seen() { tail -n +"$from" "$COORD_LOG" | grep -q "$1"; }
ok=$(submit -N2 --wrap 'sleep 1') || fail "sbatch"
bad=$(submit -N1 --wrap 'exit 4') || fail "sbatch"
poll 30 "coordd: job $ok started" seen "job $ok started (uid 0, nodes n"
poll 30 "coordd: job $ok completed" seen "job $ok ended (COMPLETED, exit 0)"
poll 30 "coordd: job $bad ended" seen "job $bad ended (-, exit 4)"

# Slurm gives PrologSlurmctld no end time: coordd asks slurmctld once the
# prolog is over and passes it on (harmonicsctl shows scontrol's EndTime);
# a job without a limit is said to have none.
limited=$(submit -N1 --time=1 --wrap 'sleep 300') || fail "sbatch"
unlimited=$(submit -N1 --wrap 'sleep 300') || fail "sbatch"
poll 30 "coordd: job $limited started" seen \
  "job $limited started (uid 0, nodes n[^,]*, leaves [0-9]*, time limit asked of slurmctld)"
poll 30 "coordd: job $limited's limit from slurmctld" seen "job $limited: time limit ends in [1-6]\?[0-9] s (from slurmctld)"
poll 30 "coordd: job $unlimited without a limit" seen "job $unlimited: no time limit (from slurmctld)"
poll 10 "harmonicsctl's EndTime for job $limited (scontrol's)" ctl_end_time_matches "$limited"
scancel "$limited" "$unlimited"
poll 30 "jobs $limited $unlimited to end" sh -c \
  "! squeue -h -j $limited,$unlimited -t R,CG 2>/dev/null | grep -q ."

# coordd away: the job runs anyway and its prolog does not hold it up long.
stop_coordd
j=$(submit -N1 --wrap 'true') || fail "sbatch"
poll 30 "job $j to complete without coordd" job_state_is "$j" COMPLETED
t0=$(date +%s%N)
SLURM_JOB_ID=999 SLURM_JOB_UID=0 SLURM_JOB_NODELIST=n1 HARMONICS_CONF=$CONF "$NOTIFY" start 2>"$CLUSTER/run/notify.err" ||
  fail "harmonics-notify exited non-zero"
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 3000 ] || fail "harmonics-notify took ${ms} ms without coordd"
grep -q "harmonics-notify: job 999: $COORD_SOCKET: connect" "$CLUSTER/run/notify.err" || fail "no reason printed: $(cat "$CLUSTER/run/notify.err")"

# A bad harmonics.conf: exit 0 with the file, line and key.
echo "StateMaxAge=-3" >> "$CONF"
SLURM_JOB_ID=999 SLURM_JOB_UID=0 HARMONICS_CONF=$CONF "$NOTIFY" start 2>"$CLUSTER/run/notify.err" ||
  fail "harmonics-notify exited non-zero on a bad config"
grep -q "harmonics-notify: $CONF:$(wc -l < "$CONF"): .*StateMaxAge" "$CLUSTER/run/notify.err" ||
  fail "bad config message: $(cat "$CLUSTER/run/notify.err")"
j=$(submit -N1 --wrap 'true') || fail "sbatch with a bad harmonics.conf"
poll 30 "job $j to complete with a bad harmonics.conf" job_state_is "$j" COMPLETED
