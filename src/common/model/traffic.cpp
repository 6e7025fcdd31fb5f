// Ring and hierarchical all-reduce mapped onto the fabric. Only traffic that
// leaves a node is modelled (inside a node the GPUs talk over NVLink), so a
// ring over all ranks becomes a ring over the job's nodes: one network edge
// from each node to the next, each carrying what one rank sends.
#include "model/traffic.h"

#include "model/collective_bytes.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace harmonics {

double ring_allreduce_bytes_per_rank(double bytes, int n) {
    return ring_edge_bytes(Collective::AllReduce, bytes, n);
}

namespace {

// One network edge of a collective and the bytes it carries per iteration.
struct Edge {
    NodeId from;
    NodeId to;
    double bytes;
};

// Leaves in depth-first order from the roots, so that every switch's subtree
// is one contiguous run: a ring that walks leaves in this order leaves and
// re-enters each subtree exactly once, crossing each uplink and downlink once
// per direction.
std::vector<int> leaf_rank_dfs(const Topology& topo) {
    std::vector<int> rank(topo.switches().size(), std::numeric_limits<int>::max());
    int next = 0;
    std::function<void(SwitchId)> visit = [&](SwitchId s) {
        const Switch& w = topo.sw(s);
        if (!w.nodes.empty()) rank[s] = next++;
        for (SwitchId c : w.children) visit(c);
    };
    for (SwitchId s = 0; s < static_cast<SwitchId>(topo.switches().size()); ++s)
        if (topo.sw(s).parent == -1) visit(s);
    return rank;
}

// The job's nodes grouped by leaf, leaves in DFS order, nodes by id.
std::vector<std::vector<NodeId>> group_by_leaf(const Topology& topo, const std::vector<NodeId>& placement) {
    std::vector<int> rank = leaf_rank_dfs(topo);
    std::map<int, std::vector<NodeId>> by_rank;
    for (NodeId n : placement) by_rank[rank[topo.node(n).leaf]].push_back(n);
    std::vector<std::vector<NodeId>> groups;
    for (auto& kv : by_rank) {
        std::sort(kv.second.begin(), kv.second.end());
        groups.push_back(std::move(kv.second));
    }
    return groups;
}

void check_placement(const Topology& topo, const JobSpec& spec, const std::vector<NodeId>& placement) {
    const std::string job = "job " + std::to_string(spec.id) + ": ";
    if (!topo.finalized()) throw std::invalid_argument(job + "topology is not finalized");
    if (placement.empty()) throw std::invalid_argument(job + "empty placement");
    if (spec.gpus_per_node < 1) throw std::invalid_argument(job + "gpus_per_node must be at least 1");
    std::vector<char> seen(topo.nodes().size(), 0);
    for (NodeId n : placement) {
        if (n < 0 || n >= static_cast<NodeId>(topo.nodes().size()))
            throw std::invalid_argument(job + "node id " + std::to_string(n) + " is not in the topology");
        if (seen[n]) throw std::invalid_argument(job + "node '" + topo.node(n).name + "' placed twice");
        seen[n] = 1;
    }
}

// Turns a set of edges into one lock-step phase. All edges progress at the
// same fraction of their bytes, so an edge carrying b bytes loads each link
// of its path with weight b / bytes_per_edge (1 for a uniform collective).
CommPhase make_phase(const Topology& topo, const std::vector<Edge>& edges, double start_offset_s) {
    CommPhase ph;
    ph.start_offset_s = start_offset_s;
    for (const Edge& e : edges) ph.bytes_per_edge = std::max(ph.bytes_per_edge, e.bytes);
    if (ph.bytes_per_edge <= 0) return ph;
    std::map<LinkId, double> mult;
    for (const Edge& e : edges)
        for (LinkId l : topo.path(e.from, e.to)) mult[l] += e.bytes / ph.bytes_per_edge;
    double slowest_rate = std::numeric_limits<double>::infinity();
    for (const auto& kv : mult) {
        ph.links.push_back(LinkUse{kv.first, kv.second});
        slowest_rate = std::min(slowest_rate, topo.link(kv.first).capacity_Bps / kv.second);
    }
    ph.alone_s = ph.links.empty() ? 0.0 : ph.bytes_per_edge / slowest_rate;
    return ph;
}

// A ring through `nodes` in order; each edge carries `bytes`. Two nodes make
// two edges (there and back); one node makes none.
void add_ring(const std::vector<NodeId>& nodes, double bytes, std::vector<Edge>& out) {
    if (nodes.size() < 2) return;
    for (std::size_t i = 0; i < nodes.size(); ++i) out.push_back(Edge{nodes[i], nodes[(i + 1) % nodes.size()], bytes});
}

std::vector<CommPhase> ring_phases(const Topology& topo, const std::vector<std::vector<NodeId>>& groups, int ranks,
                                   double grad_bytes, double offset) {
    std::vector<NodeId> order;
    for (const auto& g : groups) order.insert(order.end(), g.begin(), g.end());
    std::vector<Edge> edges;
    add_ring(order, ring_allreduce_bytes_per_rank(grad_bytes, ranks), edges);
    std::vector<CommPhase> out;
    if (!edges.empty()) out.push_back(make_phase(topo, edges, offset));
    return out;
}

// Hierarchical all-reduce: reduce-scatter inside each leaf, all-reduce of the
// shards across leaves, all-gather inside each leaf. A leaf of k nodes holds S
// in k·g shards after the reduce-scatter; across leaves the shards travel on K
// parallel rings (K = the largest leaf's node count), ring c visiting node
// c mod k of each leaf and carrying S/K, so a node of a smaller leaf serves
// several rings, as it holds a larger part of S.
std::vector<CommPhase> hierarchical_phases(const Topology& topo, const std::vector<std::vector<NodeId>>& groups,
                                           int gpus_per_node, double grad_bytes, double offset) {
    std::vector<Edge> intra;
    std::size_t widest = 0;
    for (const auto& g : groups) {
        int r = static_cast<int>(g.size()) * gpus_per_node;
        add_ring(g, ring_edge_bytes(Collective::ReduceScatter, grad_bytes, r), intra);  // all-gather sends the same
        widest = std::max(widest, g.size());
    }
    std::vector<Edge> inter;
    const int L = static_cast<int>(groups.size());
    if (L > 1) {
        double shard_bytes = ring_allreduce_bytes_per_rank(grad_bytes / static_cast<double>(widest), L);
        for (std::size_t c = 0; c < widest; ++c) {
            std::vector<NodeId> ring;
            for (const auto& g : groups) ring.push_back(g[c % g.size()]);
            add_ring(ring, shard_bytes, inter);
        }
    }
    std::vector<CommPhase> out;
    if (!intra.empty()) out.push_back(make_phase(topo, intra, offset));
    if (!inter.empty()) out.push_back(make_phase(topo, inter, offset));
    if (!intra.empty()) out.push_back(make_phase(topo, intra, offset));
    return out;
}

}  // namespace

JobProfile make_profile(const Topology& topo, const JobSpec& spec, const ModelProfile& model,
                        const std::vector<NodeId>& placement) {
    check_placement(topo, spec, placement);
    auto groups = group_by_leaf(topo, placement);

    JobProfile p;
    p.id = spec.id;
    for (const auto& g : groups) {
        p.nodes.insert(p.nodes.end(), g.begin(), g.end());
        p.leaves.push_back(topo.node(g.front()).leaf);
    }
    p.compute_s = model.compute_s;
    const int ranks = static_cast<int>(placement.size()) * spec.gpus_per_node;
    const double offset = (1.0 - std::clamp(model.overlap, 0.0, 1.0)) * model.compute_s;
    p.phases = spec.pattern == CollectivePattern::Hierarchical
                   ? hierarchical_phases(topo, groups, spec.gpus_per_node, model.grad_bytes, offset)
                   : ring_phases(topo, groups, ranks, model.grad_bytes, offset);
    double comm = 0;
    for (const CommPhase& ph : p.phases) comm += ph.alone_s;
    p.isolated_period_s = p.phases.empty() ? p.compute_s : std::max(p.compute_s, offset + comm);
    return p;
}

}  // namespace harmonics
