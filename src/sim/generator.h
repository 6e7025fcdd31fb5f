// Synthetic workloads for large clusters: a two-level fabric of `racks` leaf
// switches, Poisson job arrivals, models drawn from the model library, sizes
// from a distribution skewed to small jobs, and iteration counts that give
// isolated runtimes of minutes. The same parameters and seed give the same
// scenario on every machine.
//
// Two regimes:
//  - utilisation == 0 (the original): an empty cluster, jobs placed in
//    arrival order by the rack-aware rule. Free leaves abound, so jobs
//    rarely share an uplink.
//  - utilisation > 0: a busy, fragmented cluster. Before time 0 a history of
//    jobs (sizes 2-32 nodes, powers of two) arrives and departs at the target
//    utilisation, each placed by the same rule Slurm's topology/tree plugin
//    follows (one leaf when one has room, else the fewest leaves with free
//    nodes); the jobs still running when the history ends are the scenario's
//    jobs at time 0, on the nodes the history gave them. `jobs` more may
//    arrive afterwards (churn), placed the same way.
//
// `placement` chooses the rule for both: rack-aware (topology/tree, the
// default), linear (no topology plugin: Slurm's best fit over consecutive
// node indices, blind to leaves) or scattered (the same with a node order
// unrelated to racks); placement_plan.h. doc/scale.md says why each is found
// on production clusters.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/placement_plan.h"
#include "sim/scenario.h"

namespace harmonics {
namespace sim {

struct GeneratorParams {
    int racks = 16;
    int nodes_per_rack = 8;
    double node_Bps = 12.5e9;    // 100 Gb/s NICs
    double oversubscription = 3;
    int jobs = 50;               // arrivals from time 0 on (may be 0 when utilisation > 0)
    double arrival_rate = 0.1;   // jobs per second
    double duration_s = 0;       // 0: until every job has finished
    double min_runtime_s = 300;  // isolated runtime of a job, drawn uniformly
    double max_runtime_s = 1800;
    // Share of the nodes busy at time 0, in (0, 1]; 0: the original regime.
    double utilisation = 0;
    // Departures in the history before time 0, in multiples of the number of
    // jobs that fill the cluster to `utilisation` (more: closer to steady state).
    int history_rounds = 4;
    // How the history and the arrivals choose nodes.
    PlacementRule placement = PlacementRule::RackAware;
    // Model names jobs are drawn from, uniformly (a site running a few model
    // shapes: sweeps, job arrays); empty: the whole model library.
    std::vector<std::string> models;
    unsigned seed = 1;
};

// Throws std::invalid_argument on parameters out of range.
Scenario generate_scenario(const GeneratorParams& p);

// Job sizes (nodes) of the fragmented regime and their weights (sum 1).
const std::vector<std::pair<int, double>>& busy_cluster_sizes();

}  // namespace sim
}  // namespace harmonics
