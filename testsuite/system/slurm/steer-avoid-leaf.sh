#!/usr/bin/env bash
# A leaf whose uplink coordd rejects (accept=0) is avoided: the job gets the
# accepted leaves as a feature constraint and lands there; a job whose
# partition lacks the accepted leaves is not constrained (Slurm would reject it).
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
cancel_all
write_summary 0 1
j=$(submit -N3 --exclusive --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
nodes=$(job_field "$j" NodeList)
[ "$(leaf_of_nodes "$nodes")" = rack2 ] || fail "job $j on $nodes, not in rack2"
[ "$(job_field "$j" Features)" = rack2 ] || fail "job $j: Features=$(job_field "$j" Features)"
scontrol show job "$j" | grep -q "AdminComment=harmonics-steer: one-leaf wait=30s leaves=rack2 epoch=1" ||
  fail "job $j: wrong tag: $(scontrol show job "$j" | grep AdminComment)"
# Both leaves rejected: still one leaf, no constraint.
write_summary 0 0
j=$(submit -N2 --exclusive --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
[ "$(job_field "$j" Features)" = "(null)" ] || fail "job $j: Features=$(job_field "$j" Features)"
[ "$(leaf_of_nodes "$(job_field "$j" NodeList)")" != split ] || fail "job $j spans leaves"

# Partition r1 holds only rack1, which is rejected: the job must still be
# accepted and run there, kept in one leaf but with no constraint.
trap 'scontrol delete partitionname=r1 >/dev/null 2>&1' EXIT
scontrol create partitionname=r1 nodes=n[1-4] state=up || fail "create partition r1"
write_summary 0 1 0 "partition debug nodes=n[1-8] default=1" "partition r1 nodes=n[1-4] default=0"
j=$(submit -p r1 -N2 --exclusive --wrap 'sleep 1') || fail "sbatch -p r1 rejected"
poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
[ "$(job_field "$j" Features)" = "(null)" ] || fail "job $j: Features=$(job_field "$j" Features)"
[ "$(job_field "$j" Switches)" = "1@00:00:30" ] || fail "job $j: Switches=$(job_field "$j" Switches)"
[ "$(leaf_of_nodes "$(job_field "$j" NodeList)")" = rack1 ] || fail "job $j not in rack1"
# The default partition still avoids the rejected leaf.
j=$(submit -N2 --exclusive --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $j running" job_state_is "$j" RUNNING COMPLETED
[ "$(job_field "$j" Features)" = rack2 ] || fail "job $j: Features=$(job_field "$j" Features)"
