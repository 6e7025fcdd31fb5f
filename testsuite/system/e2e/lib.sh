# Sourced by the demo's end-to-end tests (demo-short.sh, demo-lock.sh, demo-all-holding.sh).

# need_demo BUILDDIR: exit 77 (CTest's skip) unless Slurm, gnuplot and the
# parts the demo runs are there.
need_demo() {
  local tool f
  for tool in munged slurmctld slurmd sbatch gnuplot; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
  done
  for f in src/coord/harmonics-coordd src/sched/harmonics-schedd contrib/emulator/harmonics-trainer \
           src/plugins/job_submit/harmonics/.libs/job_submit_harmonics.so; do
    [ -e "$1/$f" ] || { echo "SKIP: $f not built"; exit 77; }
  done
}
