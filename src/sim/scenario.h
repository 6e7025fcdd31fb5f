// A scenario: the fabric, the jobs and how long to run. Built in (the
// testbed-sized default and a few small ones), read from files, or generated.
#pragma once

#include <string>
#include <vector>

#include "model/job.h"
#include "sim/engine.h"
#include "sim/placement_plan.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

struct Scenario {
    std::string name;
    std::string description;
    Topology topo;
    std::vector<JobSpec> specs;
    double epoch_s = 1.0;
    double duration_s = 0;  // 0: until every job has finished
    // How jobs without a placement get their nodes (prepare_jobs).
    PlacementRule placement = PlacementRule::RackAware;
    std::vector<NodeId> node_order;  // Slurm's index order for Scattered (placement_plan.h)
    // Window of the timeline plot; both 0: chosen from the jobs' periods.
    double trace_from_s = 0, trace_to_s = 0;
};

// Names of the built-in scenarios, "default" first.
std::vector<std::string> scenario_names();
// Throws std::invalid_argument for an unknown name (the message lists the known ones).
Scenario builtin_scenario(const std::string& name);

// Places the jobs that have no placement (placement_plan.h) and maps each onto
// the fabric. Throws std::runtime_error naming the job on an unknown model or
// a bad placement.
std::vector<SimJob> prepare_jobs(Scenario& scenario);

// Marks round(share · jobs) of `jobs`, drawn from `seed`, as measuring only
// (JobProfile::holds false): their NCCL hooks run with Gate=no, so they
// report but never hold a collective. Returns how many were marked; throws
// std::invalid_argument unless share is in [0, 1].
int mark_measuring(std::vector<SimJob>& jobs, double share, unsigned seed);

// Marks the jobs named in `ids` as measuring only (the demo's emulated jobs
// run with HARMONICS_GATE=off). Throws std::invalid_argument naming an id
// that is not among `jobs`.
void mark_measuring_jobs(std::vector<SimJob>& jobs, const std::vector<JobId>& ids);

// Jobs that start at time 0 (a busy cluster's snapshot, a hand-written
// testbed) begin their first iterations together, so their first collectives
// are in one phase; on a cluster that is already running they sit at
// unrelated points of their iterations. Moves each such job's start to a
// moment drawn uniformly from its first isolated period (a stream of `seed`
// of its own, so the scenario's other draws stay the same). Placements are
// unchanged: prepare_jobs has already given the nodes. Returns how many moved.
int spread_start_phases(std::vector<SimJob>& jobs, const Topology& topo, unsigned seed);
// Each job at a pace of its own, as jobs of one model with other batch sizes
// or clocks run: its compute, its collectives' offsets and bytes (so their
// durations) and its profile's isolated period all times one factor drawn
// uniformly in [1 - spread, 1 + spread] (a stream of `seed` of its own).
// Returns how many jobs were scaled (none for spread 0); throws
// std::invalid_argument unless spread is in [0, 0.5).
int spread_paces(std::vector<SimJob>& jobs, double spread, unsigned seed);
// --start-phases: true for "random", false for "aligned"; throws
// std::invalid_argument naming the option for any other word.
bool parse_start_phases(const std::string& name);

// The timeline window: the scenario's, or four median isolated periods from
// two epochs after the last arrival, when the policy has had decision rounds.
void trace_window(const Scenario& scenario, const std::vector<SimJob>& jobs, double* from_s, double* to_s);

}  // namespace sim
}  // namespace harmonics
