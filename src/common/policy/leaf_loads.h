// Which leaves' uplinks and downlinks each job loads, and how much on average:
// what the Global Coordinator chooses owners by and groups leaves' jobs with.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {

// Which leaf each uplink/downlink belongs to.
std::unordered_map<LinkId, SwitchId> leaf_of_links(const Topology& topo);

// Per job, the leaves whose uplink/downlink it loads (ascending ids), with its
// average load there (a share of the link's capacity).
struct LeafLoad {
    std::vector<std::pair<SwitchId, double>> per_leaf;
};

std::vector<LeafLoad> leaf_loads(const Topology& topo, const std::vector<JobProfile>& jobs,
                                 const std::unordered_map<LinkId, SwitchId>& leaf_of);

}  // namespace harmonics
