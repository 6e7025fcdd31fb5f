#!/usr/bin/env bash
# An unchanged `sbatch -N3 --exclusive` lands inside one leaf, says why in
# its AdminComment, and two such jobs take one leaf each.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
cancel_all
write_summary 1 1
a=$(submit -N3 --exclusive --wrap 'sleep 3') || fail "sbatch"
b=$(submit -N3 --exclusive --wrap 'sleep 3') || fail "sbatch"
for j in $a $b; do
  poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
  nodes=$(job_field "$j" NodeList)
  leaf=$(leaf_of_nodes "$nodes")
  [ "$leaf" != split ] || fail "job $j spans leaves: $nodes"
  scontrol show job "$j" | grep -q "AdminComment=harmonics-steer: one-leaf wait=30s" || fail "job $j: no steering tag"
  [ "$(job_field "$j" Switches)" = "1@00:00:30" ] || fail "job $j: Switches=$(job_field "$j" Switches)"
  echo "job $j: $nodes ($leaf)"
done
[ "$(leaf_of_nodes "$(job_field "$a" NodeList)")" != "$(leaf_of_nodes "$(job_field "$b" NodeList)")" ] ||
  fail "both jobs in one leaf"
poll 30 "job $a to complete" job_state_is "$a" COMPLETED
poll 30 "job $b to complete" job_state_is "$b" COMPLETED
# srun allocations go through the same plugin.
names=$(cd "$JOBS_DIR" && timeout 60 srun -N3 --exclusive printenv SLURMD_NODENAME | sort | paste -sd,) ||
  fail "srun -N3 --exclusive"
[ "$(leaf_of_nodes "$names")" != split ] || fail "srun -N3 spans leaves: $names"
echo "srun: $names"
grep -q "job_submit/harmonics: uid 0 3-node job printenv steered: one-leaf" "$CTLD_LOG" || fail "srun job not steered"
