// Where each job runs, decided once per scenario before any policy runs, so
// every policy is measured on the same jobs on the same nodes. Jobs are taken
// in arrival order; a node is busy from a job's start until its estimated end
// (isolated runtime with headroom). Nodes are chosen by the shared rack-aware
// rule (model/placement.h). A job that does not fit at its arrival starts when enough nodes free
// up: its arrival_s is moved there.
#pragma once

#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

// Rough isolated iteration time before placement: compute, then a ring
// all-reduce at NIC speed after the non-overlapped part of compute.
double estimate_iteration_s(const JobSpec& spec, double node_Bps);

// Fills `placement` of every spec that has none. Throws std::runtime_error
// naming the job when it needs more nodes than the cluster has.
void plan_placements(const Topology& topo, std::vector<JobSpec>& specs);

// How fragmented a placed workload is: what decides whether jobs meet on
// uplinks at all (doc/scale.md).
struct Fragmentation {
    int jobs = 0;              // placed jobs
    int multi_node = 0;        // of them, on 2+ nodes
    int spanning = 0;          // of them, on 2+ leaves (their rings cross uplinks)
    int leaf_fit_spanning = 0; // spanning although no larger than one leaf
    int leaf_fit = 0;          // multi-node jobs no larger than one leaf
    int shared_uplinks = 0;    // leaves whose uplink 2+ spanning jobs cross
    int crowded_uplinks = 0;   // leaves whose uplink 3+ spanning jobs cross
    int max_per_uplink = 0;    // most spanning jobs on one uplink
};

// Counts over the specs that have a placement (all of them after
// plan_placements), at no particular time: jobs are counted whether or not
// they overlap in time.
Fragmentation fragmentation(const Topology& topo, const std::vector<JobSpec>& specs);

}  // namespace sim
}  // namespace harmonics
