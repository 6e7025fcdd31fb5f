#!/usr/bin/env bash
# The plugins load into slurmctld: every symbol they need must come from
# their own libraries or from slurmctld's (slurm_info, slurm_xstrdup, ...),
# and nothing heavy (the policies' solver) may ride along.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
[ -f "$JOB_SUBMIT_SO" ] || skip "job_submit/harmonics not built"
status=0
for so in "$JOB_SUBMIT_SO" "$PREP_SO"; do
  [ -f "$so" ] || continue
  # Resolved by slurmctld's libslurmfull at load time.
  bad=$(ldd -r "$so" 2>&1 | sed -n 's/^undefined symbol: \([^ \t]*\).*/\1/p' |
        grep -vE '^(slurm_[a-z_]+|running_in_slurmctld)$')
  [ -z "$bad" ] || { echo "FAIL: $so: unresolved: $bad" >&2; status=1; }
  heavy=$(ldd "$so" | grep -E 'libCbc|libClp|liblapack|libblas|libevent' || true)
  [ -z "$heavy" ] || { echo "FAIL: $so links $heavy" >&2; status=1; }
  exported=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDRB]$/ { print $3 }' | sort | tr '\n' ' ')
  echo "$(basename "$so"): exports $exported"
  echo "$exported" | grep -qE '(^| )harmonics|_Z' && { echo "FAIL: $so exports C++ internals" >&2; status=1; }
done
exit $status
