// Plots of a comparison, drawn by gnuplot when it is installed (looked up on
// PATH at run time); without it the data and scripts are written all the same.
//  - timeline-<policy>.png: when each job's collectives occupy the busiest
//    rack uplink (one row per job): overlapping bars are collisions, bars that
//    take turns are the interleaving Harmonics aims for;
//  - cdf-slowdown.png: CDF over jobs of the iteration slowdown, per policy.
#pragma once

#include <string>
#include <vector>

#include "sim/report.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

// The uplink that carried the most bytes in `run`, or -1.
LinkId busiest_uplink(const Topology& topo, const RunResult& run);

// Path of an executable `name` found on PATH, or "".
std::string find_on_path(const std::string& name);

// Writes the data files and plots.gp into `dir` (which must exist) and runs
// gnuplot there. Returns a one-line note for the user (what was written, or
// that gnuplot is missing). Returns false in *ok when a file could not be written.
std::string write_plots(const std::string& dir, const Topology& topo, const std::vector<PolicyRun>& runs,
                        const LowerBound& lb, bool* ok);

}  // namespace sim
}  // namespace harmonics
