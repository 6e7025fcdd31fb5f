# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared by the Slurm system tests: where the fixture's cluster lives, and
# small bounded helpers. Source it as: . "$(dirname "$0")/lib.sh" SRCDIR BUILDDIR
# Every wait here is bounded; a test that fails prints the slurmctld log tail.
SRCDIR=$(cd "$1" && pwd)
BUILDDIR=$(cd "$2" && pwd)
CLUSTER=$BUILDDIR/testsuite/slurm-cluster
# Several build trees may run this suite at once on one host: each takes its
# own block of 16 ports (20000-29999), derived from its path.
PORT_BASE=${HARMONICS_SLURM_PORT_BASE:-$((20000 + $(printf %s "$BUILDDIR" | cksum | cut -d' ' -f1) % 625 * 16))}
NODES=8
MC=$SRCDIR/contrib/minicluster
JOBS_DIR=$CLUSTER/jobs
STATE_FILE=$CLUSTER/run/leaves.state
CTLD_LOG=$CLUSTER/log/slurmctld.log
JOB_SUBMIT_SO=$BUILDDIR/src/plugins/job_submit/harmonics/.libs/job_submit_harmonics.so
PREP_SO=$BUILDDIR/src/plugins/prep/harmonics/.libs/prep_harmonics.so
export SLURM_CONF=$CLUSTER/etc/slurm.conf

fail() {
  echo "FAIL: $*" >&2
  if [ -f "$CTLD_LOG" ]; then echo "--- slurmctld log (tail) ---" >&2; tail -n 25 "$CTLD_LOG" >&2; fi
  exit 1
}
skip() { echo "SKIP: $*"; exit 77; }

# Exit 77 (CTest: skipped) where Slurm or the plugin is not available.
need_slurm() {
  for tool in munged slurmctld slurmd sbatch; do
    command -v "$tool" >/dev/null || skip "$tool not installed"
  done
  [ -f "$JOB_SUBMIT_SO" ] || skip "job_submit/harmonics not built"
}
need_cluster() {
  need_slurm
  scontrol ping >/dev/null 2>&1 || fail "the test cluster in $CLUSTER is not up (fixture slurm.cluster_up)"
}

# poll SECONDS DESCRIPTION COMMAND...: every 0.1 s until COMMAND succeeds.
poll() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || fail "timed out after ${limit}s waiting for $what"
    sleep 0.1
  done
}

# One field of `scontrol show job`, e.g. job_field 12 NodeList.
job_field() {
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
job_state_is() {  # job_state_is JOB STATE...
  local s; s=$(job_field "$1" JobState)
  shift
  for want in "$@"; do [ "$s" = "$want" ] && return 0; done
  return 1
}
# sbatch with output under the cluster's jobs folder; prints the job id.
submit() {
  mkdir -p "$JOBS_DIR"
  sbatch --parsable --chdir="$JOBS_DIR" --output="$JOBS_DIR/%j.out" "$@" | cut -d';' -f1
}
# Cancel everything still queued (each test starts from an idle cluster).
cancel_all() {
  scancel --quiet --full -u root >/dev/null 2>&1 || true
  poll 20 "an empty queue" sh -c '[ -z "$(squeue -h -o %i -t PD,R,CG)" ]'
}

# Leaf summary as coordd would write it (format: src/common/state/leaf_summary.h).
#   write_summary ACCEPT_RACK1 ACCEPT_RACK2 [AGE_SECONDS [EXTRA_RECORD...]]
write_summary() {
  local written=$(( $(date +%s) - ${3:-0} ))
  cat > "$STATE_FILE.tmp" <<SUMMARY
harmonics-leaf-summary 1
epoch 1
written $written
leaf rack1 nodes=n[1-4] feature=rack1 size=4 uplink_load=0.5 accept=$1
leaf rack2 nodes=n[5-8] feature=rack2 size=4 uplink_load=0.5 accept=$2
SUMMARY
  shift 3 2>/dev/null && [ $# -gt 0 ] && printf '%s\n' "$@" >> "$STATE_FILE.tmp"
  mv "$STATE_FILE.tmp" "$STATE_FILE"
}

# The leaf (rack1/rack2) holding all nodes of a Slurm hostlist, or "split".
leaf_of_nodes() {
  local r1=0 r2=0 n
  for n in $(scontrol show hostnames "$1"); do
    case ${n#n} in 1|2|3|4) r1=1 ;; 5|6|7|8) r2=1 ;; esac
  done
  if [ $r1 = 1 ] && [ $r2 = 0 ]; then echo rack1
  elif [ $r2 = 1 ] && [ $r1 = 0 ]; then echo rack2
  else echo split; fi
}

# --- harmonics-coordd beside the test cluster ---
COORDD=$BUILDDIR/src/coord/harmonics-coordd
HCTL=$BUILDDIR/src/coord/harmonicsctl
COORD_SOCKET=$CLUSTER/run/coordd.sock
COORD_LOG=$CLUSTER/log/coordd.log
COORD_PID=""
need_coordd() {
  [ -x "$COORDD" ] && [ -x "$HCTL" ] || skip "harmonics-coordd not built"
  [ -f "$PREP_SO" ] || skip "prep/harmonics not built (run contrib/slurm-headers BUILDDIR, then configure)"
}
start_coordd() {
  HARMONICS_CONF=$CLUSTER/etc/harmonics.conf "$COORDD" --listen none --slurm-conf "$SLURM_CONF" \
    --log "$COORD_LOG" >>"$COORD_LOG" 2>&1 &
  COORD_PID=$!
  poll 15 "coordd's socket" test -S "$COORD_SOCKET"
  poll 15 "coordd answering" "$HCTL" -f "$CLUSTER/etc/harmonics.conf" ping
}
stop_coordd() {
  [ -n "$COORD_PID" ] || return 0
  kill -TERM "$COORD_PID" 2>/dev/null
  local end=$((SECONDS + 10))
  while kill -0 "$COORD_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
  kill -KILL "$COORD_PID" 2>/dev/null
  wait "$COORD_PID" 2>/dev/null
  COORD_PID=""
}
# coordd's table: "JOBID STATE" lines from `harmonicsctl show jobs`.
coordd_jobs() {
  "$HCTL" -f "$CLUSTER/etc/harmonics.conf" show jobs | sed -n 's/^JobId=\([0-9]*\) .*State=\([a-z]*\).*/\1 \2/p'
}
coordd_running_ids() { coordd_jobs | awk '$2 != "ended" { print $1 }' | sort -n | tr '\n' ' '; }
# Running in Slurm's eyes (a completing job has already ended for coordd).
squeue_running_ids() { squeue -h -t R -o %i | sort -n | tr '\n' ' '; }
tables_match() { [ "$(coordd_running_ids)" = "$(squeue_running_ids)" ]; }
# harmonicsctl shows the job's EndTime as scontrol does.
ctl_end_time_matches() {  # ctl_end_time_matches JOB
  local want
  want=$(scontrol show job "$1" | grep -o 'EndTime=[^ ]*') || return 1
  "$HCTL" -f "$CLUSTER/etc/harmonics.conf" show job "$1" | grep -q "State=.* $want\b"
}
