#!/usr/bin/env bash
# What the user asked is never overridden: --constraint, --nodelist,
# --exclude and --switches jobs, and one-node jobs, pass untouched.
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
need_cluster
cancel_all
write_summary 1 0   # rack2 rejected: steering would move jobs to rack1
untouched() {  # untouched JOB: no tag, no switch request added
  scontrol show job "$1" | grep -q "AdminComment=harmonics" && fail "job $1 was steered"
  return 0
}
c=$(submit -N3 --exclusive --constraint=rack2 --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $c running" job_state_is "$c" RUNNING COMPLETED
untouched "$c"
[ "$(job_field "$c" Features)" = rack2 ] || fail "job $c: Features=$(job_field "$c" Features)"
[ "$(leaf_of_nodes "$(job_field "$c" NodeList)")" = rack2 ] || fail "job $c not in rack2"
[ "$(job_field "$c" Switches)" = "" ] || fail "job $c: Switches=$(job_field "$c" Switches)"
cancel_all
w=$(submit -N2 --nodelist=n4,n5 --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $w running" job_state_is "$w" RUNNING COMPLETED
untouched "$w"
[ "$(job_field "$w" NodeList)" = "n[4-5]" ] || fail "job $w on $(job_field "$w" NodeList)"
x=$(submit -N2 --exclude=n[1-3] --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $x running" job_state_is "$x" RUNNING COMPLETED
untouched "$x"
s=$(submit -N2 --switches=2 --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $s running" job_state_is "$s" RUNNING COMPLETED
untouched "$s"
case $(job_field "$s" Switches) in 2@*) ;; *) false ;; esac || fail "job $s: Switches=$(job_field "$s" Switches)"
one=$(submit -N1 --wrap 'sleep 1') || fail "sbatch"
poll 30 "job $one running" job_state_is "$one" RUNNING COMPLETED
untouched "$one"
