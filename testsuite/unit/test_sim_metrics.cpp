// Summaries and the lower bound, with numbers worked out by hand.
#include <gtest/gtest.h>

#include "sim/metrics.h"

using namespace harmonics;
using namespace harmonics::sim;

namespace {

SimJob ring_job(JobId id, const Topology& t, const std::string& a, const std::string& b, double compute_s,
                double bytes, long iterations) {
    SimJob j;
    j.id = id;
    j.iterations = iterations;
    j.profile.id = id;
    j.profile.compute_s = compute_s;
    CommPhase p;
    p.start_offset_s = compute_s;  // all-reduce after compute
    p.bytes_per_edge = bytes;
    NodeId x = t.find_node(a), y = t.find_node(b);
    for (LinkId l : t.path(x, y)) p.links.push_back({l, 1.0});
    for (LinkId l : t.path(y, x)) p.links.push_back({l, 1.0});
    j.profile.phases.push_back(p);
    return j;
}

}  // namespace

TEST(SimMetrics, PercentileInterpolatesBetweenOrderStatistics) {
    EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
    EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 100), 4);
    EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
    EXPECT_DOUBLE_EQ(percentile({1, 2}, 99), 1.99);
    EXPECT_DOUBLE_EQ(percentile({}, 99), 0);
}

TEST(SimMetrics, SummaryAveragesOverJobs) {
    RunResult r;
    r.end_s = 10;
    JobResult a;  // 10 iterations of 0.3 s, isolated 0.2: slowdown 1.5, done at 3 s
    a.iterations = a.iterations_done = 10;
    a.iteration_time_s = 3;
    a.comm_time_s = 2;
    a.isolated_s = 0.2;
    a.finish_s = 3;
    JobResult b;  // still running at 10 s: 4 of 8 iterations of 2 s: JCT 10 + 4·2 = 18
    b.iterations = 8;
    b.iterations_done = 4;
    b.iteration_time_s = 8;
    b.comm_time_s = 1;
    b.isolated_s = 1;
    r.jobs = {a, b};
    r.sched_time_s = {0.001, 0.003};
    Summary s = summarize(r);
    EXPECT_DOUBLE_EQ(s.mean_slowdown, (1.5 + 2.0) / 2);
    EXPECT_DOUBLE_EQ(s.mean_comm_ms, (200.0 + 250.0) / 2);
    EXPECT_DOUBLE_EQ(s.mean_jct_s, (3.0 + 18.0) / 2);
    EXPECT_DOUBLE_EQ(s.sched_ms_per_epoch, 2.0);
    EXPECT_EQ(s.jobs, 2);
}

TEST(SimMetrics, LowerBoundStretchesJobsOnAnOversubscribedUplink) {
    // rack uplinks of 10 GB/s (= one NIC). Two jobs: compute 0.05 s, then 1 GB
    // per edge alone in 0.1 s: T = 0.15 s. Each puts 1 GB per iteration on
    // rack1's uplink: offered 2 · 1 GB / 0.15 s = 13.3 GB/s, ρ = 4/3.
    Topology t = Topology::make_two_level(2, 2, 10e9, 2.0);
    std::vector<SimJob> jobs = {ring_job(1, t, "n1", "n3", 0.05, 1e9, 100), ring_job(2, t, "n2", "n4", 0.05, 1e9, 100)};
    LowerBound lb = lower_bound(t, jobs);
    ASSERT_EQ(lb.slowdown.size(), 2u);
    EXPECT_NEAR(lb.slowdown[0], 4.0 / 3.0, 1e-12);
    EXPECT_NEAR(lb.summary.mean_jct_s, 100 * 0.15 * 4.0 / 3.0, 1e-9);
    EXPECT_NEAR(lb.summary.mean_comm_ms, 100.0, 1e-9);
    // With compute 0.2 s (T = 0.3 s) the uplink is loaded 2/3: no stretch.
    jobs = {ring_job(1, t, "n1", "n3", 0.2, 1e9, 100), ring_job(2, t, "n2", "n4", 0.2, 1e9, 100)};
    EXPECT_NEAR(lower_bound(t, jobs).slowdown[1], 1.0, 1e-12);
    // Jobs that never run at the same time do not load each other's links.
    jobs = {ring_job(1, t, "n1", "n3", 0.05, 1e9, 100), ring_job(2, t, "n2", "n4", 0.05, 1e9, 100)};
    jobs[1].arrival_s = 100;
    EXPECT_NEAR(lower_bound(t, jobs).slowdown[0], 1.0, 1e-12);
}

TEST(SimMetrics, LowerBoundOfACutRunCoversTheJobsThatArrivedBeforeTheEnd) {
    Topology t = Topology::make_two_level(2, 2, 10e9, 2.0);
    std::vector<SimJob> jobs = {ring_job(1, t, "n1", "n3", 0.05, 1e9, 100), ring_job(2, t, "n2", "n4", 0.05, 1e9, 300)};
    jobs[1].arrival_s = 50;  // after the end of a 40 s run
    LowerBound lb = lower_bound(t, jobs, 40);
    EXPECT_EQ(lb.summary.jobs, 1);
    EXPECT_NEAR(lb.summary.mean_jct_s, 100 * 0.15, 1e-9);  // job 1 alone: no stretch
    EXPECT_EQ(lb.slowdown.size(), 2u);                     // per-job figures for every job
}
