// harmonics-sim: the flow-level simulator of a GPU cluster's fabric that runs
// every scheduling policy on the same jobs. See doc/harmonics-sim.md.
#include "sim/cli.h"

int main(int argc, char** argv) { return harmonics::sim::run_cli(argc, argv); }
