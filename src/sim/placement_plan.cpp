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
    std::vector<double> busy_until;  // per node

    // Nodes for `count` at time t (the shared rack-aware rule), or empty if
    // not enough are free.
    std::vector<NodeId> choose(int count, double t) const {
        std::vector<bool> is_free(busy_until.size());
        for (std::size_t n = 0; n < busy_until.size(); ++n) is_free[n] = busy_until[n] <= t;
        return place_rack_aware(topo, is_free, count);
    }
};

}  // namespace

void plan_placements(const Topology& topo, std::vector<JobSpec>& specs) {
    double node_Bps = topo.nodes().empty() ? 12.5e9 : topo.link(topo.node(0).up).capacity_Bps;
    Planner p{topo, std::vector<double>(topo.nodes().size(), 0.0)};
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
