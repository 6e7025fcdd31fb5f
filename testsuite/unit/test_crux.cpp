// crux: GPU intensity, priority order and compression into 8 classes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "policy/crux.h"

using namespace harmonics;

namespace {

// Four racks of two nodes, NICs 10 GB/s, uplinks oversubscribed 4:1 (5 GB/s).
Topology racks() { return Topology::make_two_level(4, 2, 10e9, 4.0); }

// A job on `nodes` nodes whose one collective moves `bytes` per edge over
// rack 0's uplink (multiplicity 1) and its nodes' NICs.
JobProfile job(const Topology& topo, JobId id, double compute_s, double bytes, int nodes = 2) {
    JobProfile j;
    j.id = id;
    for (int i = 0; i < nodes; ++i) j.nodes.push_back(i);
    j.compute_s = compute_s;
    CommPhase ph;
    ph.start_offset_s = compute_s;
    ph.bytes_per_edge = bytes;
    ph.alone_s = bytes / 5e9;
    ph.links = {{topo.sw(topo.leaves()[0]).up, 1.0}, {topo.node(0).up, 1.0}};
    j.phases.push_back(ph);
    j.isolated_period_s = compute_s + ph.alone_s;
    return j;
}

}  // namespace

TEST(Crux, IntensityIsComputeOverBottleneckCommTime) {
    Topology topo = racks();
    // 1 GB over the 5 GB/s uplink (the bottleneck; the NIC takes 0.1 s) = 0.2 s;
    // 0.3 s of compute on 2 nodes = 0.6 node-seconds; intensity 3.
    EXPECT_NEAR(crux_intensity(topo, job(topo, 1, 0.3, 1e9)), 3.0, 1e-12);
    // No traffic: infinitely intense (never waits for the network).
    JobProfile local = job(topo, 2, 0.3, 0);
    local.phases.clear();
    EXPECT_TRUE(std::isinf(crux_intensity(topo, local)));
}

TEST(Crux, OrdersJobsByIntensity) {
    Topology topo = racks();
    // Intensities 0.6/0.2=3, 0.1/0.2=0.5, 0.6/0.02=30, 0.2/0.4=0.5 (a tie), 1/0.2=5.
    std::vector<JobProfile> jobs = {job(topo, 10, 0.3, 1e9), job(topo, 11, 0.05, 1e9), job(topo, 12, 0.3, 1e8),
                                    job(topo, 13, 0.1, 2e9), job(topo, 14, 0.5, 1e9)};
    auto p = make_policy("crux", PolicyOptions{});
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->uses_priorities());
    Decisions d = p->decide(topo, jobs, 0, EpochReason::Arrival);
    ASSERT_EQ(d.jobs.size(), 5u);
    EXPECT_EQ(d.jobs[12].priority, 0);
    EXPECT_EQ(d.jobs[14].priority, 1);
    EXPECT_EQ(d.jobs[10].priority, 2);
    EXPECT_EQ(d.jobs[11].priority, 3);
    EXPECT_EQ(d.jobs[13].priority, 3);   // same intensity, same class
    for (auto& [id, jd] : d.jobs) EXPECT_FALSE(jd.gated) << id;
}

TEST(Crux, TwentyJobsUseAtMostEightClassesInIntensityOrder) {
    Topology topo = racks();
    std::vector<JobProfile> jobs;
    for (int i = 0; i < 20; ++i) jobs.push_back(job(topo, 100 + i, 0.01 * (1 + (i * 7) % 20), 1e8 * (1 + i % 3)));
    auto p = make_policy("crux", PolicyOptions{});
    Decisions d = p->decide(topo, jobs, 0, EpochReason::Arrival);
    ASSERT_EQ(d.jobs.size(), 20u);
    std::set<int> used;
    for (auto& [id, jd] : d.jobs) {
        EXPECT_GE(jd.priority, 0);
        EXPECT_LT(jd.priority, 8);
        used.insert(jd.priority);
    }
    EXPECT_EQ(used.size(), 8u);   // more distinct intensities than classes: all classes used
    for (const JobProfile& a : jobs)
        for (const JobProfile& b : jobs) {
            double ia = crux_intensity(topo, a), ib = crux_intensity(topo, b);
            if (ia > ib) {
                EXPECT_LE(d.jobs[a.id].priority, d.jobs[b.id].priority) << a.id << " vs " << b.id;
            }
        }
}

TEST(Crux, CompressionKeepsOrdersOfMagnitudeApart) {
    // Three clusters a factor 10-100 apart, two jobs each, three classes.
    std::vector<int> c = compress_priorities({0.09, 1000, 10, 900, 0.1, 9}, 3);
    EXPECT_EQ(c, (std::vector<int>{2, 0, 1, 0, 2, 1}));
    // Fewer distinct values than classes: one class per value, most intense first.
    EXPECT_EQ(compress_priorities({1, 2, 2, 3}, 8), (std::vector<int>{2, 1, 1, 0}));
    EXPECT_TRUE(compress_priorities({}, 8).empty());
    // Infinite and zero intensities bracket the rest.
    std::vector<int> e = compress_priorities({INFINITY, 1.0, 0.0}, 8);
    EXPECT_EQ(e, (std::vector<int>{0, 1, 2}));
}
