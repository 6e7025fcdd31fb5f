// Rack-aware placement for jobs that arrive without one: keep a job inside one
// leaf switch when it fits (its ring then never crosses an uplink), otherwise
// spread it over as few leaves as possible.
#pragma once

#include <vector>

#include "topology/topology.h"

namespace harmonics {

// `is_free[n]` tells whether node n may be used (indexed by NodeId, sized like
// topo.nodes()). Returns `count` free nodes, or an empty vector when fewer are
// free. Rules, all deterministic:
//  - one leaf when some leaf has `count` free nodes: the one with the fewest
//    free nodes that still fits (best fit, to keep large holes for large jobs);
//  - otherwise the fewest leaves: the leaves with most free nodes, the last one
//    chosen as the smallest leaf that covers what is still missing;
//  - ties go to the leaf that comes first in the tree (depth-first order), and
//    inside a leaf the lowest node ids are taken.
// The result is sorted leaf by leaf in tree order.
std::vector<NodeId> place_rack_aware(const Topology& topo, const std::vector<bool>& is_free, int count);

// Same, with the free nodes given as a list of ids.
std::vector<NodeId> place_rack_aware(const Topology& topo, const std::vector<NodeId>& free_nodes, int count);

}  // namespace harmonics
