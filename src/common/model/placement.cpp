#include "model/placement.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace harmonics {

namespace {

struct LeafFree {
    SwitchId leaf;
    std::vector<NodeId> free;  // ascending ids
};

// Leaves with free nodes, in depth-first tree order.
std::vector<LeafFree> free_by_leaf(const Topology& topo, const std::vector<bool>& is_free) {
    std::vector<LeafFree> out;
    std::function<void(SwitchId)> visit = [&](SwitchId s) {
        const Switch& w = topo.sw(s);
        if (!w.nodes.empty()) {
            LeafFree lf{s, {}};
            for (NodeId n : w.nodes)
                if (is_free[n]) lf.free.push_back(n);
            std::sort(lf.free.begin(), lf.free.end());
            if (!lf.free.empty()) out.push_back(std::move(lf));
        }
        for (SwitchId c : w.children) visit(c);
    };
    for (SwitchId s = 0; s < static_cast<SwitchId>(topo.switches().size()); ++s)
        if (topo.sw(s).parent == -1) visit(s);
    return out;
}

// The smallest leaf (then first in tree order) among `cand` with >= need free nodes; -1 if none.
int best_fit(const std::vector<LeafFree>& leaves, const std::vector<int>& cand, int need) {
    int best = -1;
    for (int i : cand) {
        int have = static_cast<int>(leaves[i].free.size());
        if (have < need) continue;
        if (best == -1 || have < static_cast<int>(leaves[best].free.size())) best = i;
    }
    return best;
}

}  // namespace

std::vector<NodeId> place_rack_aware(const Topology& topo, const std::vector<bool>& is_free, int count) {
    if (is_free.size() != topo.nodes().size())
        throw std::invalid_argument("place_rack_aware: free mask has " + std::to_string(is_free.size()) +
                                    " entries for " + std::to_string(topo.nodes().size()) + " nodes");
    std::vector<NodeId> out;
    if (count <= 0) return out;
    std::vector<LeafFree> leaves = free_by_leaf(topo, is_free);
    int total = 0;
    for (const auto& lf : leaves) total += static_cast<int>(lf.free.size());
    if (total < count) return out;

    std::vector<int> all(leaves.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) all[i] = static_cast<int>(i);
    std::vector<int> chosen;
    int partial = best_fit(leaves, all, count);  // the leaf that may be taken in part
    if (partial != -1) {
        chosen.push_back(partial);
    } else {
        // Largest leaves first, until the next one would complete the job; that
        // last leaf is chosen by best fit among the rest (by_size[k] fits, so
        // one is found).
        std::vector<int> by_size = all;
        std::stable_sort(by_size.begin(), by_size.end(),
                         [&](int a, int b) { return leaves[a].free.size() > leaves[b].free.size(); });
        int got = 0;
        std::size_t k = 0;
        while (got + static_cast<int>(leaves[by_size[k]].free.size()) < count) {
            got += static_cast<int>(leaves[by_size[k]].free.size());
            chosen.push_back(by_size[k++]);
        }
        std::vector<int> rest(by_size.begin() + static_cast<long>(k), by_size.end());
        partial = best_fit(leaves, rest, count - got);
        chosen.push_back(partial);
    }
    std::sort(chosen.begin(), chosen.end());  // tree order
    int taken_elsewhere = 0;
    for (int i : chosen)
        if (i != partial) taken_elsewhere += static_cast<int>(leaves[i].free.size());
    for (int i : chosen) {
        const auto& f = leaves[i].free;
        std::size_t take = i == partial ? static_cast<std::size_t>(count - taken_elsewhere) : f.size();
        out.insert(out.end(), f.begin(), f.begin() + static_cast<long>(take));
    }
    return out;
}

std::vector<NodeId> place_rack_aware(const Topology& topo, const std::vector<NodeId>& free_nodes, int count) {
    std::vector<bool> is_free(topo.nodes().size(), false);
    for (NodeId n : free_nodes) {
        if (n < 0 || n >= static_cast<NodeId>(is_free.size()))
            throw std::invalid_argument("place_rack_aware: node id " + std::to_string(n) + " is not in the topology");
        is_free[n] = true;
    }
    return place_rack_aware(topo, is_free, count);
}

}  // namespace harmonics
