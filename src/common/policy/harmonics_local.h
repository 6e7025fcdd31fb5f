// Harmonics' Local Scheduler: one instance per leaf switch. It takes the jobs
// whose traffic crosses the leaf's uplink/downlink and chooses a shift (and,
// where it pays, a stretched harmonic period) for each job it owns, treating
// the jobs other leaves own as fixed. No I/O: the simulator's harmonics policy
// and harmonics-schedd both call it.
#pragma once

#include <map>
#include <vector>

#include "policy/policy.h"

namespace harmonics {

struct LeafProblem {
    SwitchId leaf = -1;
    std::vector<JobProfile> jobs;             // every job loading this leaf's uplink/downlink
    std::map<JobId, JobDecision> fixed;       // decided elsewhere (cross-leaf jobs owned by another leaf)
    std::map<JobId, JobDecision> previous;    // last epoch's decisions (warm start)
    double now_s = 0;
};

struct LeafResult {
    std::map<JobId, JobDecision> jobs;        // decisions for the jobs this leaf owns
    double predicted_cost = 0;                // predicted slowdown summed over jobs
    bool changed = false;                     // false when the previous schedule was kept
    double wall_s = 0;                        // time this decision took
};

class LocalScheduler {
public:
    explicit LocalScheduler(const PolicyOptions& opts) : opts_(opts) {}
    LeafResult decide(const Topology& topo, const LeafProblem& problem) const;

private:
    PolicyOptions opts_;
};

}  // namespace harmonics
