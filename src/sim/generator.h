// Synthetic workloads for large clusters: a two-level fabric of `racks` leaf
// switches, Poisson job arrivals, models drawn from the model library, sizes
// from a distribution skewed to small jobs, and iteration counts that give
// isolated runtimes of minutes. The same parameters and seed give the same
// scenario on every machine.
#pragma once

#include "sim/scenario.h"

namespace harmonics {
namespace sim {

struct GeneratorParams {
    int racks = 16;
    int nodes_per_rack = 8;
    double node_Bps = 12.5e9;    // 100 Gb/s NICs
    double oversubscription = 3;
    int jobs = 50;
    double arrival_rate = 0.1;   // jobs per second
    double duration_s = 0;       // 0: until every job has finished
    double min_runtime_s = 300;  // isolated runtime of a job, drawn uniformly
    double max_runtime_s = 1800;
    unsigned seed = 1;
};

// Throws std::invalid_argument on parameters out of range.
Scenario generate_scenario(const GeneratorParams& p);

}  // namespace sim
}  // namespace harmonics
