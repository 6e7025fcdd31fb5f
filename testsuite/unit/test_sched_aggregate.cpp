// The schedd's per-job aggregation of rank reports and the profile it hands
// to the Local Scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sched/job_aggregate.h"
#include "sched/job_profile.h"
#include "topology/topology.h"

using namespace harmonics;
using namespace harmonics::sched;

namespace {
RankSample sample(double period, double off, double dur, double bytes, double at) {
    RankSample s;
    s.period_s = period;
    s.phases.push_back({off, dur, bytes});
    s.received_s = at;
    return s;
}
}  // namespace

TEST(JobAggregate, MedianIgnoresOneJitteryRank) {
    JobAggregate a;
    a.add(0, sample(0.200, 0.15, 0.040, 1e8, 10));
    a.add(1, sample(0.201, 0.15, 0.041, 1e8, 10));
    a.add(2, sample(0.950, 0.90, 0.500, 1e8, 10));   // a straggler's odd iteration
    auto s = a.summarize(10.1, 1.0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->ranks, 3);
    EXPECT_NEAR(s->period_s, 0.201, 1e-9);
    ASSERT_EQ(s->phases.size(), 1u);
    EXPECT_NEAR(s->phases[0].duration_s, 0.041, 1e-9);
}

TEST(JobAggregate, StaleRanksDropOutAndNoneLeftIsNoSummary) {
    JobAggregate a;
    a.add(0, sample(0.2, 0.1, 0.05, 1, 0));
    a.add(1, sample(0.4, 0.1, 0.05, 1, 5));
    auto s = a.summarize(5.5, 1.0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->ranks, 1);
    EXPECT_NEAR(s->period_s, 0.4, 1e-12);
    EXPECT_FALSE(a.summarize(100, 1.0));
}

TEST(JobAggregate, SmoothsJitterButFollowsARealChange) {
    JobAggregate a;
    a.add(0, sample(0.200, 0.1, 0.05, 1, 0));
    EXPECT_NEAR(a.summarize(0, 1)->period_s, 0.200, 1e-12);
    a.add(0, sample(0.210, 0.1, 0.05, 1, 1));
    double p = a.summarize(1, 1)->period_s;
    EXPECT_GT(p, 0.200);
    EXPECT_LT(p, 0.210);                        // 5% jitter is smoothed
    a.add(0, sample(0.400, 0.1, 0.05, 1, 2));
    EXPECT_NEAR(a.summarize(2, 1)->period_s, 0.400, 1e-12);   // doubling is real
}

TEST(JobAggregate, RejectsAbsurdReportsAndBoundsRanks) {
    JobAggregate a(2);
    EXPECT_FALSE(a.add(0, sample(-1, 0, 0, 0, 0)));
    EXPECT_FALSE(a.add(0, sample(0.2, -5, 0, 0, 0)));
    EXPECT_FALSE(a.add(-1, sample(0.2, 0, 0, 0, 0)));
    EXPECT_TRUE(a.add(0, sample(0.2, 0, 0, 0, 0)));
    EXPECT_TRUE(a.add(1, sample(0.2, 0, 0, 0, 0)));
    EXPECT_FALSE(a.add(2, sample(0.2, 0, 0, 0, 0)));   // over max_ranks
    EXPECT_TRUE(a.add(1, sample(0.3, 0, 0, 0, 0)));    // an existing rank may update
    EXPECT_EQ(a.ranks(), 2u);
    EXPECT_EQ(a.rejected(), 4u);
}

TEST(JobAggregate, MostCommonPhaseCountWins) {
    JobAggregate a;
    a.add(0, sample(0.2, 0.1, 0.05, 1, 0));
    a.add(1, sample(0.2, 0.1, 0.05, 1, 0));
    RankSample two = sample(0.2, 0.05, 0.01, 1, 0);
    two.phases.push_back({0.1, 0.05, 1});
    a.add(2, two);
    auto s = a.summarize(0, 1);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->phases.size(), 1u);
}

TEST(JobProfile, CrossLeafJobLoadsBothUplinks) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    JobSummary sum;
    sum.period_s = 0.2;
    sum.phases.push_back({0.15, 0.04, 4e8});
    JobProfile p = build_profile(t, 7, {"n1", "n2", "n5", "n6"}, {}, sum);
    EXPECT_EQ(p.leaves.size(), 2u);
    ASSERT_EQ(p.phases.size(), 1u);
    SwitchId r1 = t.find_switch("rack1"), r2 = t.find_switch("rack2");
    bool up1 = false, up2 = false;
    for (const LinkUse& u : p.phases[0].links) {
        up1 = up1 || u.link == t.sw(r1).up;
        up2 = up2 || u.link == t.sw(r2).up;
    }
    EXPECT_TRUE(up1 && up2);
    // 0.4 GB per 0.2 s over a 12.5 GB/s uplink: 16% load.
    EXPECT_NEAR(uplink_load(t, p, r1), 4e8 / 12.5e9 / 0.2, 1e-9);
    EXPECT_NEAR(p.compute_s, 0.16, 1e-12);
}

TEST(JobProfile, LeafLocalJobLeavesTheUplinkAlone) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    JobSummary sum;
    sum.period_s = 0.2;
    sum.phases.push_back({0.15, 0.04, 4e8});
    JobProfile p = build_profile(t, 8, {"n1", "n2", "nosuchnode"}, {}, sum);
    EXPECT_EQ(p.nodes.size(), 2u);
    EXPECT_EQ(uplink_load(t, p, t.find_switch("rack1")), 0.0);
}

TEST(JobProfile, IsolatedPhaseFromBytesWhenMeasuredUnderContention) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    JobSummary sum;
    sum.period_s = 0.3;
    // 1 GB took 160 ms because another job shared the uplink; alone it is
    // 1 GB / 12.5 GB/s = 80 ms.
    sum.phases.push_back({0.1, 0.16, 1e9});
    JobProfile p = build_profile(t, 9, {"n1", "n5"}, {}, sum);
    ASSERT_EQ(p.phases.size(), 1u);
    EXPECT_NEAR(p.phases[0].alone_s, 0.08, 1e-9);
    EXPECT_NEAR(p.isolated_period_s, 0.14 + 0.08, 1e-9);
    EXPECT_NEAR(p.measured_period_s, 0.3, 1e-12);
    // A phase of few bytes barely occupies the link, however long it took.
    sum.phases[0] = {0.1, 0.01, 1000};
    EXPECT_NEAR(build_profile(t, 9, {"n1", "n5"}, {}, sum).phases[0].alone_s, 1000 / 12.5e9, 1e-12);
}

TEST(JobProfile, GateHoldsAreNotPartOfTheJobsRhythm) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    JobSummary sum;
    // Gated on a 0.25 s period: 80 ms alone on the uplink, held 50 ms before
    // each phase. The job itself needs 0.2 s per iteration.
    sum.period_s = 0.25;
    sum.phases.push_back({0.0, 0.08, 1e9, 0.05});
    JobProfile p = build_profile(t, 9, {"n1", "n5"}, {}, sum);
    EXPECT_NEAR(p.compute_s, 0.12, 1e-9);
    EXPECT_NEAR(p.isolated_period_s, 0.2, 1e-9);
    EXPECT_NEAR(p.measured_period_s, 0.25, 1e-12);
}

TEST(JobAggregate, HeldIsTheMedianOverRanksAndMustBeSane) {
    JobAggregate a;
    for (int r = 0; r < 3; ++r) {
        RankSample s;
        s.period_s = 0.25;
        s.phases.push_back({0.0, 0.08, 1e9, 0.01 * (r + 1)});
        s.received_s = 1.0;
        ASSERT_TRUE(a.add(r, s));
    }
    auto sum = a.summarize(1.0, 5.0);
    ASSERT_TRUE(sum);
    EXPECT_NEAR(sum->phases[0].held_s, 0.02, 1e-12);
    RankSample bad;
    bad.period_s = 0.25;
    bad.phases.push_back({0.0, 0.08, 1e9, -0.01});
    EXPECT_FALSE(a.add(7, bad));
}

TEST(JobAggregate, ComputeHoldsStillWhenAScheduleStartsHolding) {
    // Free under contention: 0.30 s, of which 0.18 s all-reduce. Gated: the
    // all-reduce runs alone (0.08 s) after a 0.05 s hold, period 0.25 s. The
    // job's compute is 0.12 s throughout, and so must the summary's be.
    JobAggregate a;
    RankSample free_run;
    free_run.period_s = 0.30;
    free_run.phases.push_back({0.0, 0.18, 1e9, 0.0});
    a.add(0, free_run);
    auto s = a.summarize(0, 1);
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->period_s - s->phases[0].duration_s - s->phases[0].held_s, 0.12, 1e-12);
    RankSample gated;
    gated.period_s = 0.25;
    gated.phases.push_back({0.0, 0.08, 1e9, 0.05});
    gated.received_s = 1;
    a.add(0, gated);
    s = a.summarize(1, 1);
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->period_s, 0.25, 1e-12);
    EXPECT_NEAR(s->period_s - s->phases[0].duration_s - s->phases[0].held_s, 0.12, 1e-12);
}

// coordd's view of a cross-leaf job: the leaf whose period is the median,
// weighted by the ranks each leaf hosts, whatever order the leaves are in.
TEST(MedianLeaf, TheRankWeightedMedianLeafWhateverTheOrder) {
    const std::vector<PhaseSample> ph{{0.15, 0.04, 1e8}}, none;
    std::vector<LeafSummary> leaves{{2, 0.2004, &ph}, {6, 0.2000, &ph}, {2, 0.2008, &ph}};
    auto k = median_leaf(leaves);
    ASSERT_TRUE(k);
    EXPECT_EQ(*k, 1u);   // six of ten ranks measured 200.0 ms
    std::swap(leaves[0], leaves[1]);
    EXPECT_EQ(median_leaf(leaves), std::optional<std::size_t>(0));
    // Equal weights: the lower median, from any order.
    std::vector<LeafSummary> even{{1, 0.2008, &ph}, {1, 0.2000, &ph}, {1, 0.2004, &ph}, {1, 0.2012, &ph}};
    EXPECT_EQ(median_leaf(even), std::optional<std::size_t>(2));
    std::reverse(even.begin(), even.end());
    EXPECT_EQ(median_leaf(even), std::optional<std::size_t>(1));
    // A leaf without phases is passed over while another has them; a leaf
    // with no period never counts; no period at all is none.
    std::vector<LeafSummary> partial{{8, 0.300, &none}, {1, 0.2004, &ph}, {0, 0, &ph}};
    EXPECT_EQ(median_leaf(partial), std::optional<std::size_t>(1));
    partial[1].phases = &none;
    EXPECT_EQ(median_leaf(partial), std::optional<std::size_t>(0));
    EXPECT_FALSE(median_leaf({{3, 0, &ph}, {0, -1, nullptr}}));
}

TEST(JobAggregate, TheLatestIterationStartOfTheFreshRanksIsWhereTheJobIs) {
    JobAggregate a;
    RankSample r0 = sample(0.2, 0.1, 0.05, 1e8, 10), r1 = r0, stale = r0, absurd = r0;
    r0.iteration_start_s = 1.7e9 + 0.4;
    r1.iteration_start_s = 1.7e9 + 0.6;
    stale.iteration_start_s = 1.7e9 + 5;
    stale.received_s = 0;   // not fresh at 10.1
    absurd.iteration_start_s = -3;
    a.add(0, r0);
    a.add(1, r1);
    a.add(2, stale);
    a.add(3, absurd);       // kept as not known
    auto s = a.summarize(10.1, 1.0);
    ASSERT_TRUE(s);
    EXPECT_NEAR(s->last_collective_s, 1.7e9 + 0.6, 1e-6);
    // The profile carries it; without one it stays unknown.
    const Topology topo = Topology::make_two_level(2, 2, 12.5e9, 2.0);
    EXPECT_NEAR(build_profile(topo, 7, {}, {}, *s).last_collective_s, 1.7e9 + 0.6, 1e-6);
    JobAggregate none;
    none.add(0, sample(0.2, 0.1, 0.05, 1e8, 10));
    EXPECT_FALSE(std::isfinite(build_profile(topo, 7, {}, {}, *none.summarize(10.1, 1.0)).last_collective_s));
}
