// Progressive filling as a water level. All unfrozen flows of the class being
// filled share one rate t (the level). A link l saturates at the level
//     t_l = (residual_l - frozen_l) / weight_l
// where frozen_l is the load of flows already frozen on l and weight_l the sum
// of multiplicities of unfrozen flows on l. The link with the lowest t_l
// saturates first and its flows freeze at that level. Freezing flows can only
// raise the t of the other links they cross, so a heap holding lower bounds
// finds the next bottleneck: a popped link whose level has risen goes back.
//
// A link that only one flow crosses (most NICs, since nodes are not shared)
// never binds anyone else: it becomes a fixed bound capacity/multiplicity
// on that flow, one heap entry per flow instead of one per link.
//
// Cost per call: O((E + U + F)·log(U + F)) per priority class, with E the
// (flow, link) uses, U the links crossed by two or more flows, F the flows;
// nothing is proportional to the fabric's total link count. The work arrays
// live in a per-thread workspace kept between calls, so once it has grown a
// call allocates only its result.
#include "model/maxmin.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace harmonics {

namespace {

struct SharedUse {
    int link;  // local index of a shared link
    double multiplicity;
};

struct Workspace {
    std::vector<int> local_of;          // link id -> local index, -1 when unused
    std::vector<LinkId> used;           // local index -> link id
    std::vector<int> users;             // (flow, link) uses per local link
    std::vector<int> shared_of;         // local index -> shared index, -1 when one user
    std::vector<double> residual;       // per shared link: capacity left for this class
    std::vector<double> frozen;         // load of this class's frozen flows
    std::vector<double> weight;         // multiplicity of its unfrozen flows
    std::vector<int> active;            // count of its unfrozen flows
    std::vector<char> queued;           // entered the heap for this class
    std::vector<int> link_begin;        // CSR: shared link -> flows crossing it
    std::vector<int> link_flows;
    std::vector<int> cursor;            // next free slot per shared link while building
    std::vector<int> flow_begin;        // CSR: flow -> its shared links
    std::vector<SharedUse> flow_links;
    std::vector<double> own_bound;      // per flow: min capacity/multiplicity of its single-user links
    std::vector<char> done;             // flow frozen
    std::vector<int> order;             // flows by priority class
    std::vector<std::pair<double, int>> heap;
};

Workspace& workspace() {
    thread_local Workspace ws;
    return ws;
}

using HeapEntry = std::pair<double, int>;  // (level, id): id < S a shared link, else S + flow
constexpr double kNoWeight = 1e-12;
struct Later {
    bool operator()(const HeapEntry& a, const HeapEntry& b) const { return a.first > b.first; }
};

void check(const std::vector<double>& capacity, const std::vector<FlowDemand>& flows) {
    for (std::size_t f = 0; f < flows.size(); ++f) {
        if (!flows[f].links) throw std::invalid_argument("maxmin_rates: flow " + std::to_string(f) + " has no links");
        for (const LinkUse& u : *flows[f].links)
            if (u.link < 0 || static_cast<std::size_t>(u.link) >= capacity.size())
                throw std::invalid_argument("maxmin_rates: flow " + std::to_string(f) + " uses unknown link " +
                                            std::to_string(u.link));
    }
}

// Maps used links to dense indices, splits them into shared and single-user
// links, and builds both adjacency lists.
void build(Workspace& ws, const std::vector<double>& capacity, const std::vector<FlowDemand>& flows) {
    const double inf = std::numeric_limits<double>::infinity();
    ws.used.clear();
    ws.users.clear();
    for (const FlowDemand& fd : flows)
        for (const LinkUse& u : *fd.links) {
            int& l = ws.local_of[u.link];
            if (l == -1) {
                l = static_cast<int>(ws.used.size());
                ws.used.push_back(u.link);
                ws.users.push_back(0);
            }
            ws.users[l] += 1;
        }
    const std::size_t U = ws.used.size();
    ws.shared_of.assign(U, -1);
    ws.residual.clear();
    ws.link_begin.assign(1, 0);
    for (std::size_t l = 0; l < U; ++l)
        if (ws.users[l] > 1) {
            ws.shared_of[l] = static_cast<int>(ws.residual.size());
            ws.residual.push_back(std::max(0.0, capacity[ws.used[l]]));
            ws.link_begin.push_back(ws.link_begin.back() + ws.users[l]);
        }
    const std::size_t S = ws.residual.size();
    ws.link_flows.resize(ws.link_begin.back());
    ws.cursor.assign(ws.link_begin.begin(), ws.link_begin.end() - 1);
    ws.flow_begin.assign(1, 0);
    ws.flow_links.clear();
    ws.own_bound.assign(flows.size(), inf);
    for (std::size_t f = 0; f < flows.size(); ++f) {
        for (const LinkUse& u : *flows[f].links) {
            int l = ws.local_of[u.link];
            int sh = ws.shared_of[l];
            if (sh >= 0) {
                ws.flow_links.push_back(SharedUse{sh, u.multiplicity});
                ws.link_flows[ws.cursor[sh]++] = static_cast<int>(f);
            } else if (u.multiplicity > 0) {
                ws.own_bound[f] = std::min(ws.own_bound[f], std::max(0.0, capacity[u.link]) / u.multiplicity);
            }
        }
        ws.flow_begin.push_back(static_cast<int>(ws.flow_links.size()));
    }
    ws.frozen.assign(S, 0.0);
    ws.weight.assign(S, 0.0);
    ws.active.assign(S, 0);
    ws.queued.assign(S, 0);
    ws.done.assign(flows.size(), 1);
}

// Fills flows order[lo, hi) on the residual capacities, writes their rates
// and takes their load off the residuals for the next class.
void fill_class(Workspace& ws, std::size_t lo, std::size_t hi, std::vector<double>& rate) {
    const int S = static_cast<int>(ws.residual.size());
    auto level_of = [&](int l) { return std::max(0.0, ws.residual[l] - ws.frozen[l]) / ws.weight[l]; };
    std::vector<HeapEntry>& heap = ws.heap;
    heap.clear();
    for (std::size_t i = lo; i < hi; ++i) {
        int f = ws.order[i];
        ws.done[f] = 0;
        for (int k = ws.flow_begin[f]; k < ws.flow_begin[f + 1]; ++k) {
            ws.weight[ws.flow_links[k].link] += ws.flow_links[k].multiplicity;
            ws.active[ws.flow_links[k].link] += 1;
        }
        if (ws.own_bound[f] < std::numeric_limits<double>::infinity()) heap.push_back({ws.own_bound[f], S + f});
    }
    for (std::size_t i = lo; i < hi; ++i) {
        int f = ws.order[i];
        for (int k = ws.flow_begin[f]; k < ws.flow_begin[f + 1]; ++k) {
            int l = ws.flow_links[k].link;
            if (ws.queued[l] || ws.weight[l] <= kNoWeight) continue;
            ws.queued[l] = 1;
            heap.push_back({level_of(l), l});
        }
    }
    std::make_heap(heap.begin(), heap.end(), Later{});
    auto freeze = [&](int f, double level) {
        ws.done[f] = 1;
        rate[f] = level;
        for (int k = ws.flow_begin[f]; k < ws.flow_begin[f + 1]; ++k) {
            const SharedUse& u = ws.flow_links[k];
            if (u.multiplicity > 0) ws.frozen[u.link] += u.multiplicity * level;
            ws.weight[u.link] -= u.multiplicity;
            ws.active[u.link] -= 1;
        }
    };
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), Later{});
        auto [bound, id] = heap.back();
        heap.pop_back();
        if (id >= S) {  // a flow's own link binds
            if (!ws.done[id - S]) freeze(id - S, bound);
            continue;
        }
        // Only flows of multiplicity 0 left: the link no longer limits anyone.
        if (ws.active[id] == 0 || ws.weight[id] <= kNoWeight) continue;
        const double level = level_of(id);
        if (level > bound) {
            heap.push_back({level, id});
            std::push_heap(heap.begin(), heap.end(), Later{});
            continue;
        }
        for (int k = ws.link_begin[id]; k < ws.link_begin[id + 1]; ++k)
            if (!ws.done[ws.link_flows[k]]) freeze(ws.link_flows[k], level);
    }
    for (std::size_t i = lo; i < hi; ++i) {
        int f = ws.order[i];
        for (int k = ws.flow_begin[f]; k < ws.flow_begin[f + 1]; ++k) {
            int l = ws.flow_links[k].link;
            ws.residual[l] = std::max(0.0, ws.residual[l] - ws.frozen[l]);
            ws.frozen[l] = 0;
            ws.weight[l] = 0;
            ws.active[l] = 0;
            ws.queued[l] = 0;
        }
    }
}

}  // namespace

std::vector<double> maxmin_rates(const std::vector<double>& capacity, const std::vector<FlowDemand>& flows,
                                 bool strict_priority) {
    // A flow that crosses no link is never limited.
    std::vector<double> rate(flows.size(), std::numeric_limits<double>::infinity());
    if (flows.empty()) return rate;
    check(capacity, flows);  // before touching the shared link map
    Workspace& ws = workspace();
    if (ws.local_of.size() < capacity.size()) ws.local_of.resize(capacity.size(), -1);
    build(ws, capacity, flows);

    ws.order.resize(flows.size());
    for (std::size_t f = 0; f < flows.size(); ++f) ws.order[f] = static_cast<int>(f);
    if (strict_priority)
        std::stable_sort(ws.order.begin(), ws.order.end(),
                         [&](int a, int b) { return flows[a].priority < flows[b].priority; });
    for (std::size_t lo = 0; lo < flows.size();) {
        std::size_t hi = lo + 1;
        while (hi < flows.size() &&
               (!strict_priority || flows[ws.order[hi]].priority == flows[ws.order[lo]].priority))
            ++hi;
        fill_class(ws, lo, hi, rate);
        lo = hi;
    }
    for (LinkId id : ws.used) ws.local_of[id] = -1;  // leave the map clean for the next call
    return rate;
}

}  // namespace harmonics
