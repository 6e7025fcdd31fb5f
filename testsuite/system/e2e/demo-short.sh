#!/usr/bin/env bash
# The quickstart demo, checked, on the EMULATED
# testbed: real Slurm and Harmonics, emulated GPUs and fabric. Asserts that
# Harmonics lowers the mean iteration and communication times against fair
# sharing, and that every job's emulated mean iteration time is within 10% of
# what harmonics-sim predicts for the same jobs, placement and arrivals.
# The first quarter of each job's iterations is left out as warm-up and must
# cover Harmonics learning the jobs' rhythm and the rings settling onto their
# slots. It runs every iteration of the demo: with three quarters (until
# 2026-12-04) that quarter was 7 of 30 BERT-large iterations, and a run that
# took 10-12 to settle failed (doc/testbed.md, "How often the check fails").
#   demo-short.sh SRCDIR BUILDDIR      (exit 77: Slurm or a part not built)
set -uo pipefail
SRCDIR=$(cd "$1" && pwd)
BUILDDIR=$(cd "$2" && pwd)
. "$SRCDIR/testsuite/system/e2e/lib.sh"
need_demo "$BUILDDIR"
exec "$SRCDIR/contrib/demo/run" --build "$BUILDDIR" --work "$BUILDDIR/testsuite/e2e-demo" \
  --iterations 1 --timeout 240 --check --agree 10
