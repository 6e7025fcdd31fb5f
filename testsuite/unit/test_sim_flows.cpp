// The flow table re-solves only the component touched by a change; the rates
// it holds must always equal a max-min solve over every flow in flight.
#include <gtest/gtest.h>

#include <map>

#include "model/maxmin.h"
#include "sim/flow_table.h"
#include "sim/random.h"

using namespace harmonics;
using namespace harmonics::sim;

namespace {

// Rings of two to four nodes over random racks, each with its link uses.
std::vector<std::vector<LinkUse>> random_rings(const Topology& t, Random& rng, int count) {
    std::vector<std::vector<LinkUse>> rings;
    const int n = static_cast<int>(t.nodes().size());
    for (int i = 0; i < count; ++i) {
        int k = 2 + static_cast<int>(rng.below(3));
        std::vector<NodeId> nodes;
        while (static_cast<int>(nodes.size()) < k) {
            NodeId x = static_cast<NodeId>(rng.below(n));
            if (std::find(nodes.begin(), nodes.end(), x) == nodes.end()) nodes.push_back(x);
        }
        std::map<LinkId, double> mult;
        for (int e = 0; e < k; ++e)
            for (LinkId l : t.path(nodes[e], nodes[(e + 1) % k])) mult[l] += 1;
        std::vector<LinkUse> uses;
        for (const auto& kv : mult) uses.push_back({kv.first, kv.second});
        rings.push_back(uses);
    }
    return rings;
}

void check_against_full_solve(const Topology& t, const FlowTable& table, const std::vector<int>& live,
                              bool strict) {
    std::vector<double> cap;
    for (const Link& l : t.links()) cap.push_back(l.capacity_Bps);
    std::vector<FlowDemand> all;
    for (int f : live) all.push_back(FlowDemand{table.flow(f).links, table.flow(f).priority});
    std::vector<double> want = maxmin_rates(cap, all, strict);
    // Agreement to 1e-9 of a NIC's capacity: the solver's rounding (a starved
    // class may see a few µB/s of residual capacity) and nothing more.
    const double tol = 1e-9 * 12.5e9;
    for (std::size_t i = 0; i < live.size(); ++i)
        ASSERT_NEAR(table.flow(live[i]).rate, want[i], tol) << "flow " << live[i];
}

void churn(bool strict, unsigned seed) {
    Topology t = Topology::make_two_level(6, 4, 12.5e9, 3.0);
    Random rng(seed);
    auto rings = random_rings(t, rng, 40);
    FlowTable table(t, strict);
    std::vector<int> live;
    double now = 0;
    for (int step = 0; step < 400; ++step) {
        now += 0.001;
        // Several changes at one instant, then one recompute, as the engine does.
        int changes = 1 + static_cast<int>(rng.below(3));
        for (int c = 0; c < changes; ++c) {
            if (!live.empty() && (live.size() > 25 || rng.uniform() < 0.45)) {
                std::size_t i = rng.below(live.size());
                table.finish(live[i], now);
                live.erase(live.begin() + static_cast<long>(i));
            } else {
                const auto& r = rings[rng.below(rings.size())];
                int prio = strict ? static_cast<int>(rng.below(3)) : 0;
                live.push_back(table.add(0, &r, 1e9, prio, now));
            }
        }
        table.recompute(now);
        check_against_full_solve(t, table, live, strict);
    }
    EXPECT_GT(table.solver_calls(), 0);
}

}  // namespace

TEST(SimFlows, ComponentSolvesMatchAFullSolveUnderChurn) { churn(false, 3); }

TEST(SimFlows, ComponentSolvesMatchAFullSolveWithPriorities) { churn(true, 4); }

TEST(SimFlows, RemainingBytesFollowTheRates) {
    Topology t = Topology::make_two_level(2, 2, 10e9, 2.0);
    std::vector<LinkUse> a, b;
    for (LinkId l : t.path(t.find_node("n1"), t.find_node("n3"))) a.push_back({l, 1});
    for (LinkId l : t.path(t.find_node("n2"), t.find_node("n4"))) b.push_back({l, 1});
    FlowTable table(t, false);
    int fa = table.add(0, &a, 1e9, 0, 0.0);
    table.recompute(0.0);
    EXPECT_DOUBLE_EQ(table.flow(fa).rate, 10e9);  // alone on a 10 GB/s path
    int fb = table.add(1, &b, 1e9, 0, 0.05);      // shares rack1's 10 GB/s uplink
    table.recompute(0.05);
    EXPECT_DOUBLE_EQ(table.flow(fa).rate, 5e9);
    EXPECT_DOUBLE_EQ(table.flow(fb).rate, 5e9);
    EXPECT_NEAR(table.flow(fa).remaining, 0.5e9, 1);  // 0.05 s at 10 GB/s delivered
    table.finish(fa, 0.15);                             // 0.1 s at 5 GB/s: done
    table.recompute(0.15);
    EXPECT_DOUBLE_EQ(table.flow(fb).rate, 10e9);
    EXPECT_NEAR(table.flow(fb).remaining, 0.5e9, 1);
}
