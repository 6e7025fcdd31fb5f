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

}  // namespace sim
}  // namespace harmonics
