// Where each job runs, decided once per scenario before any policy runs, so
// every policy is measured on the same jobs on the same nodes. Jobs are taken
// in arrival order; a node is busy from a job's start until its estimated end
// (isolated runtime with headroom). Nodes are chosen by the scenario's
// placement rule: the shared rack-aware rule (model/placement.h) or Slurm's
// topology-blind default (place_linear). A job that does not fit at its
// arrival starts when enough nodes free up: its arrival_s is moved there.
#pragma once

#include <string>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

// How a cluster chooses nodes for a job.
enum class PlacementRule {
    // topology/tree (or job_submit/harmonics steering): one leaf when one has
    // room, else the fewest leaves (model/placement.h).
    RackAware,
    // No topology plugin: select/cons_tres's default best fit over runs of
    // consecutive node indices, blind to leaf boundaries (place_linear).
    Linear,
    // The same, on a cluster whose node order (slurm.conf, node names) says
    // nothing about racks: the index order is a seeded shuffle of the leaves'
    // nodes (cloud instances, nodes renamed or replaced over the years).
    Scattered,
};

// "rack-aware", "linear" or "scattered"; parse_placement_rule throws std::invalid_argument
// naming the option on anything else.
const char* placement_rule_name(PlacementRule r);
PlacementRule parse_placement_rule(const std::string& name);

// Slurm's node choice without a topology plugin (select/cons_tres, default
// SelectTypeParameters, equal node weights): free nodes form runs of
// consecutive ids (slurm.conf order, rack by rack); the smallest run that holds
// the whole job is taken from its low end (first run on ties); when no run is
// large enough, the largest run is taken whole and the rest is placed the same
// way. Leaf boundaries play no part, so a job may straddle two leaves even when
// another leaf is empty. `is_free` as in place_rack_aware. Returns `count`
// nodes in ascending id order, or an empty vector when fewer are free.
// `order`, when not empty, lists every node id in Slurm's index order
// (Scattered); empty: the index order is the id order.
std::vector<NodeId> place_linear(const Topology& topo, const std::vector<bool>& is_free, int count,
                                 const std::vector<NodeId>& order = {});

// The nodes `rule` chooses (`order` as in place_linear).
std::vector<NodeId> place_by_rule(PlacementRule rule, const Topology& topo, const std::vector<bool>& is_free, int count,
                                  const std::vector<NodeId>& order = {});

// A seeded shuffle of the node ids: Slurm's index order on a Scattered cluster.
std::vector<NodeId> scattered_node_order(const Topology& topo, unsigned seed);

// Rough isolated iteration time before placement: compute, then a ring
// all-reduce at NIC speed after the non-overlapped part of compute.
double estimate_iteration_s(const JobSpec& spec, double node_Bps);

// Fills `placement` of every spec that has none. Throws std::runtime_error
// naming the job when it needs more nodes than the cluster has.
void plan_placements(const Topology& topo, std::vector<JobSpec>& specs,
                     PlacementRule rule = PlacementRule::RackAware, const std::vector<NodeId>& order = {});

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
