// A training job as the model sees it: ranks on nodes, and an iteration made
// of a compute phase and one or more communication phases whose collectives
// load a set of links. Times are seconds, sizes bytes, rates bytes/second.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace harmonics {

using JobId = std::int64_t;

enum class CollectivePattern { Ring, Hierarchical };

// How one communication phase loads the fabric. All ring edges of a
// collective move in lock-step, so the phase progresses at one rate r (bytes/s
// per edge); on link l it consumes multiplicity·r. It is done when every edge
// has carried `bytes_per_edge`.
struct LinkUse {
    LinkId link;
    double multiplicity;
};

// The phases of an iteration run one after another: a phase starts at
// max(start_offset_s, end of the previous phase), measured from the start of
// the iteration's compute.
struct CommPhase {
    double start_offset_s = 0;   // earliest start, from the iteration's start
    double bytes_per_edge = 0;
    std::vector<LinkUse> links;
    double alone_s = 0;          // duration on an idle fabric
};

// What a job is, as submitted (from a workload file or the generator).
struct JobSpec {
    JobId id = 0;
    std::string model;           // a name from the model library
    double arrival_s = 0;
    int nodes = 1;
    int gpus_per_node = 8;
    long iterations = 100;
    std::vector<NodeId> placement;   // empty: the simulator places it
    CollectivePattern pattern = CollectivePattern::Ring;
};

// What a job does per iteration once placed: the input every policy sees.
struct JobProfile {
    JobId id = 0;
    std::vector<NodeId> nodes;
    std::vector<SwitchId> leaves;    // leaves hosting its nodes
    double compute_s = 0;            // GPU compute per iteration
    std::vector<CommPhase> phases;   // usually one (gradient all-reduce)
    double isolated_period_s = 0;    // T_j on an idle fabric
    double measured_period_s = 0;    // what the hooks / simulator observe (0 = unknown)
    // Whether its ranks hold their collectives until the slot a plan gives
    // them. False: they only measure (the NCCL plugin's Gate=no, no CUDA
    // gate), so harmonics plans the job as running free and the others
    // around it; the simulator then ignores any gate for it.
    bool holds = true;
    // When its latest collective (its iteration's first) began, absolute
    // seconds (the hooks' iteration start); not finite when unknown (a
    // simulated clock starts at 0, so any time may be one). With the measured
    // period it tells when a free job's next collective comes, and so what
    // waiting for a new gate's first slot costs it (policy/gate_waits.h).
    double last_collective_s = -std::numeric_limits<double>::infinity();
    // When it will have ended at the latest, absolute seconds: Slurm's end
    // time (its start plus its time limit); 0 unknown. A one-time wait is
    // weighed over the time it has left.
    double end_s = 0;
};

}  // namespace harmonics
