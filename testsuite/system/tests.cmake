# System tests: scripts run against the built tree. Each add_test names a
# script under testsuite/system; HARMONICS_SRCDIR/BUILDDIR come from the caller.
