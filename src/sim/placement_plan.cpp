// The one-off placement plan of a scenario.
#include "sim/placement_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>

#include "model/model_library.h"
#include "model/placement.h"
#include "model/traffic.h"
#include "sim/random.h"

namespace harmonics {
namespace sim {

namespace {
// Nodes stay reserved this much longer than the isolated estimate, since
// contention stretches jobs.
constexpr double kHeadroom = 1.5;
}  // namespace

double estimate_iteration_s(const JobSpec& spec, double node_Bps) {
    const ModelProfile* m = find_model(spec.model);
    if (!m) return 0;
    double comm = ring_allreduce_bytes_per_rank(m->grad_bytes, spec.nodes * spec.gpus_per_node) / node_Bps;
    return std::max(m->compute_s, (1.0 - m->overlap) * m->compute_s + (spec.nodes > 1 ? comm : 0.0));
}

namespace {

struct Planner {
    const Topology& topo;
    PlacementRule rule;
    const std::vector<NodeId>& order;
    std::vector<double> busy_until;  // per node

    // Nodes for `count` at time t (the scenario's rule), or empty if not
    // enough are free.
    std::vector<NodeId> choose(int count, double t) const {
        std::vector<bool> is_free(busy_until.size());
        for (std::size_t n = 0; n < busy_until.size(); ++n) is_free[n] = busy_until[n] <= t;
        return place_by_rule(rule, topo, is_free, count, order);
    }
};

// A run of free nodes at consecutive indices of Slurm's node order.
struct Run {
    int first;  // index of its first node
    int size;
};

}  // namespace

const char* placement_rule_name(PlacementRule r) {
    switch (r) {
    case PlacementRule::Linear: return "linear";
    case PlacementRule::Scattered: return "scattered";
    default: return "rack-aware";
    }
}

PlacementRule parse_placement_rule(const std::string& name) {
    if (name == "rack-aware") return PlacementRule::RackAware;
    if (name == "linear") return PlacementRule::Linear;
    if (name == "scattered") return PlacementRule::Scattered;
    throw std::invalid_argument("--placement: '" + name + "' is not a placement rule (rack-aware, linear, scattered)");
}

std::vector<NodeId> place_linear(const Topology& topo, const std::vector<bool>& is_free, int count,
                                 const std::vector<NodeId>& order) {
    if (is_free.size() != topo.nodes().size())
        throw std::invalid_argument("place_linear: free mask has " + std::to_string(is_free.size()) + " entries for " +
                                    std::to_string(topo.nodes().size()) + " nodes");
    if (!order.empty() && order.size() != is_free.size())
        throw std::invalid_argument("place_linear: node order has " + std::to_string(order.size()) + " entries for " +
                                    std::to_string(is_free.size()) + " nodes");
    std::vector<NodeId> out;
    if (count <= 0) return out;
    // Runs are over Slurm's index (a position in `order`), not the node id.
    auto node_at = [&](int idx) { return order.empty() ? static_cast<NodeId>(idx) : order[idx]; };
    std::vector<Run> runs;
    int total = 0;
    for (int idx = 0; idx < static_cast<int>(is_free.size()); ++idx) {
        NodeId n = node_at(idx);
        if (n < 0 || n >= static_cast<NodeId>(is_free.size()))
            throw std::invalid_argument("place_linear: node id " + std::to_string(n) + " is not in the topology");
        if (!is_free[n]) continue;
        ++total;
        if (!runs.empty() && runs.back().first + runs.back().size == idx) ++runs.back().size;
        else runs.push_back({idx, 1});
    }
    if (total < count) return out;
    int missing = count;
    while (missing > 0) {
        // Slurm's choice (select/cons_tres _eval_nodes, no required nodes):
        // the first run large enough, replaced by a strictly smaller one that
        // is too; while none is, the largest (first on ties).
        int best = -1;
        bool best_fits = false;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            if (runs[i].size == 0) continue;
            bool fits = runs[i].size >= missing;
            if (best == -1 || (fits && !best_fits) || (fits && runs[i].size < runs[best].size) ||
                (!fits && !best_fits && runs[i].size > runs[best].size)) {
                best = static_cast<int>(i);
                best_fits = fits;
            }
        }
        Run& r = runs[best];
        int take = std::min(r.size, missing);
        for (int k = 0; k < take; ++k) out.push_back(node_at(r.first + k));
        r.first += take;
        r.size -= take;
        missing -= take;
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<NodeId> place_by_rule(PlacementRule rule, const Topology& topo, const std::vector<bool>& is_free, int count,
                                  const std::vector<NodeId>& order) {
    if (rule == PlacementRule::RackAware) return place_rack_aware(topo, is_free, count);
    if (rule == PlacementRule::Linear) return place_linear(topo, is_free, count);
    if (order.empty()) throw std::invalid_argument("scattered placement needs the node order (scattered_node_order)");
    return place_linear(topo, is_free, count, order);
}

std::vector<NodeId> scattered_node_order(const Topology& topo, unsigned seed) {
    std::vector<NodeId> order(topo.nodes().size());
    std::iota(order.begin(), order.end(), 0);
    // Fisher-Yates with the simulator's own generator: the same on every machine.
    Random rng(seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    return order;
}

void plan_placements(const Topology& topo, std::vector<JobSpec>& specs, PlacementRule rule,
                     const std::vector<NodeId>& node_order) {
    double node_Bps = topo.nodes().empty() ? 12.5e9 : topo.link(topo.node(0).up).capacity_Bps;
    Planner p{topo, rule, node_order, std::vector<double>(topo.nodes().size(), 0.0)};
    std::vector<std::size_t> order(specs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return specs[a].arrival_s < specs[b].arrival_s;
    });
    // Jobs placed by hand hold their nodes too.
    for (std::size_t i : order) {
        JobSpec& s = specs[i];
        double hold = kHeadroom * static_cast<double>(s.iterations) * estimate_iteration_s(s, node_Bps);
        if (s.placement.empty()) {
            if (s.nodes > static_cast<int>(topo.nodes().size()))
                throw std::runtime_error("job " + std::to_string(s.id) + " needs " + std::to_string(s.nodes) +
                                         " nodes; the cluster has " + std::to_string(topo.nodes().size()));
            double t = s.arrival_s;
            std::vector<NodeId> nodes = p.choose(s.nodes, t);
            if (nodes.empty()) {
                // Start when enough nodes are free: try each release time in order.
                std::vector<double> releases(p.busy_until.begin(), p.busy_until.end());
                std::sort(releases.begin(), releases.end());
                releases.erase(std::unique(releases.begin(), releases.end()), releases.end());
                for (double r : releases) {
                    if (r <= t) continue;
                    nodes = p.choose(s.nodes, r);
                    if (!nodes.empty()) {
                        t = r;
                        break;
                    }
                }
            }
            s.arrival_s = t;
            s.placement = nodes;
        }
        for (NodeId n : s.placement) p.busy_until[n] = std::max(p.busy_until[n], s.arrival_s + hold);
    }
}

Fragmentation fragmentation(const Topology& topo, const std::vector<JobSpec>& specs) {
    Fragmentation f;
    std::map<SwitchId, int> per_leaf;  // spanning jobs crossing each leaf's uplink
    int leaf_size = 0;
    for (SwitchId l : topo.leaves()) leaf_size = std::max(leaf_size, static_cast<int>(topo.sw(l).nodes.size()));
    for (const JobSpec& s : specs) {
        if (s.placement.empty()) continue;
        ++f.jobs;
        if (s.placement.size() < 2) continue;
        ++f.multi_node;
        bool fits = static_cast<int>(s.placement.size()) <= leaf_size;
        f.leaf_fit += fits;
        std::set<SwitchId> leaves;
        for (NodeId n : s.placement) leaves.insert(topo.node(n).leaf);
        if (leaves.size() < 2) continue;
        ++f.spanning;
        f.leaf_fit_spanning += fits;
        for (SwitchId l : leaves) ++per_leaf[l];
    }
    for (const auto& [leaf, n] : per_leaf) {
        f.shared_uplinks += n >= 2;
        f.crowded_uplinks += n >= 3;
        f.max_per_uplink = std::max(f.max_per_uplink, n);
    }
    return f;
}

}  // namespace sim
}  // namespace harmonics
