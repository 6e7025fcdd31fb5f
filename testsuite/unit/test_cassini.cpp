// cassini: unified circles, compatibility score, and the affinity-graph BFS.
#include <gtest/gtest.h>

#include <cmath>

#include "policy/cassini.h"
#include "policy/cassini_circle.h"

using namespace harmonics;

namespace {

// Three racks of one node, every uplink 1 GB/s.
Topology three_racks() { return Topology::make_two_level(3, 1, 1e9, 1.0); }

LinkId uplink(const Topology& topo, int rack) { return topo.sw(topo.leaves().at(rack)).up; }

// A job that computes for compute_s, then runs one collective of comm_s
// loading each link at `fraction` of 1 GB/s times the link's multiplicity.
JobProfile job(JobId id, double compute_s, double comm_s, std::vector<LinkUse> links, double fraction = 1.0) {
    JobProfile j;
    j.id = id;
    j.nodes = {0};
    j.compute_s = compute_s;
    CommPhase ph;
    ph.start_offset_s = compute_s;
    ph.alone_s = comm_s;
    ph.bytes_per_edge = fraction * 1e9 * comm_s;
    ph.links = std::move(links);
    j.phases.push_back(ph);
    j.isolated_period_s = compute_s + comm_s;
    return j;
}

double mod(double x, double p) {
    double r = std::fmod(x, p);
    return r < 0 ? r + p : r;
}

}  // namespace

// Hand-worked two-link example, slots of 10 ms:
//   A: period 40 ms, collective 20 ms at 100% of L1.
//   B: period 40 ms, collective 20 ms at 100% of L1 and 50% of L2 (multiplicity 0.5).
//   C: period 80 ms, collective 30 ms at 80% of L2.
// L1 circle = lcm(40,40) = 40 ms = 4 arcs; A busy arcs {0,1} at 1.0, B the
// same at rotation 0. B's rotation r: r=0 overlaps arcs 0,1 with excess 1 ->
// mean excess 2/4, score 0.5; r=1 or 3 -> one arc, 0.75; r=2 -> 1.0. Best r_B = 2.
// L2 circle = lcm(40,80) = 80 ms = 8 arcs; B busy {0,1,4,5} at 0.5, C busy
// three consecutive arcs at 0.8. The gaps {2,3} and {6,7} hold two arcs, so
// C overlaps B on at least one arc, excess 0.5 + 0.8 - 1 = 0.3: best score
// 1 - 0.3/8 = 0.9625, reached first at r_C = 1 (arcs {1,2,3}).
// BFS from B (two links; the root is the job with most contended links):
// t_B = 0; L1 (contention 1.0) first: t_A = t_B + (0 - 2)·10 ms = -20 ms -> 20 ms;
// L2 (contention 0.55): t_C = t_B + (1 - 0)·10 ms = 10 ms.
TEST(Cassini, HandWorkedTwoLinkExample) {
    Topology topo = three_racks();
    const LinkId L1 = uplink(topo, 0), L2 = uplink(topo, 1);
    std::vector<JobProfile> jobs = {job(1, 0.02, 0.02, {{L1, 1.0}}),
                                    job(2, 0.02, 0.02, {{L1, 1.0}, {L2, 0.5}}),
                                    job(3, 0.05, 0.03, {{L2, 1.0}}, 0.8)};
    PolicyOptions opts;
    opts.slot_s = 0.01;
    CassiniPolicy cassini(opts);
    Decisions d = cassini.decide(topo, jobs, 5.0, EpochReason::Arrival);

    ASSERT_EQ(d.jobs.size(), 3u);
    EXPECT_NEAR(d.jobs[1].shift_s, 0.020, 1e-9);
    EXPECT_NEAR(d.jobs[2].shift_s, 0.000, 1e-9);
    EXPECT_NEAR(d.jobs[3].shift_s, 0.010, 1e-9);
    EXPECT_NEAR(d.jobs[1].period_s, 0.04, 1e-12);
    EXPECT_NEAR(d.jobs[3].period_s, 0.08, 1e-12);
    for (auto& [id, jd] : d.jobs) {
        EXPECT_TRUE(jd.gated) << id;
        EXPECT_EQ(jd.origin_s, 5.0) << id;
    }
    ASSERT_EQ(cassini.links().size(), 2u);
    EXPECT_NEAR(cassini.links().at(L1).best_score, 1.0, 1e-9);
    EXPECT_NEAR(cassini.links().at(L1).final_score, 1.0, 1e-9);
    EXPECT_NEAR(cassini.links().at(L2).best_score, 0.9625, 1e-9);
    EXPECT_NEAR(cassini.links().at(L2).final_score, 0.9625, 1e-9);
    EXPECT_NEAR(cassini.links().at(L2).period_circle_s, 0.08, 1e-12);
    EXPECT_EQ(cassini.loops(), 0);
    EXPECT_GE(d.sched_time_s, 0.0);
}

TEST(Cassini, ScoreIsOneMinusMeanExcess) {
    // Two arcs of four at 1.0 each, fully overlapping: excess 1 on two arcs.
    std::vector<std::vector<double>> d = {{1, 1, 0, 0}, {1, 1, 0, 0}};
    EXPECT_DOUBLE_EQ(compatibility_score(d, {0, 0}), 0.5);
    EXPECT_DOUBLE_EQ(compatibility_score(d, {0, 1}), 0.75);
    EXPECT_DOUBLE_EQ(compatibility_score(d, {0, 2}), 1.0);
    CircleRotation r = best_rotation(d, {{0}, {0, 1, 2, 3}}, 4096);
    EXPECT_TRUE(r.exhaustive);
    EXPECT_EQ(r.rotation, (std::vector<int>{0, 2}));
    // The greedy path (exhaustive limit 1) finds the same here.
    CircleRotation g = best_rotation(d, {{0}, {0, 1, 2, 3}}, 1);
    EXPECT_FALSE(g.exhaustive);
    EXPECT_DOUBLE_EQ(g.score, 1.0);
}

TEST(Cassini, UnifiedCircleIsCappedLcm) {
    CassiniCircle c = make_circle({0.040, 0.060}, 0.001, 8, 1024);
    EXPECT_NEAR(c.perimeter_s, 0.120, 1e-12);
    EXPECT_EQ(c.bins, 120);
    // 101 ms and 173 ms: lcm 17.473 s, capped at 8 x 173 ms.
    CassiniCircle d = make_circle({0.101, 0.173}, 0.001, 8, 1024);
    EXPECT_NEAR(d.perimeter_s, 8 * 0.173, 1e-9);
    EXPECT_EQ(d.bins, 1024);
    EXPECT_NEAR(d.bin_s * d.bins, d.perimeter_s, 1e-12);
}

// A, B, C pairwise share a link: L1 = {A,B}, L2 = {B,C}, L3 = {A,C}; the
// affinity graph A-L1-B-L2-C-L3-A is a loop. Every job still gets exactly one
// shift; the two links the BFS crosses first (tree edges) keep their optimum;
// the link that closes the loop finds both its jobs shifted and keeps them
// (its score is what the tree left it, never above its own optimum).
TEST(Cassini, LoopClosingLinkKeepsShiftedJobs) {
    Topology topo = three_racks();
    const LinkId L1 = uplink(topo, 0), L2 = uplink(topo, 1), L3 = uplink(topo, 2);
    std::vector<JobProfile> jobs = {job(1, 0.02, 0.01, {{L1, 1.0}, {L3, 1.0}}),
                                    job(2, 0.02, 0.01, {{L1, 1.0}, {L2, 1.0}}),
                                    job(3, 0.02, 0.01, {{L2, 1.0}, {L3, 1.0}})};
    PolicyOptions opts;
    opts.slot_s = 0.01;
    CassiniPolicy cassini(opts);
    Decisions d = cassini.decide(topo, jobs, 0, EpochReason::Arrival);
    ASSERT_EQ(d.jobs.size(), 3u);
    EXPECT_EQ(cassini.loops(), 1);
    int closing = 0;
    for (auto& [l, r] : cassini.links()) {
        EXPECT_LE(r.final_score, r.best_score + 1e-9) << l;
        if (r.closes_loop) {
            ++closing;
        } else {
            EXPECT_NEAR(r.final_score, r.best_score, 1e-9) << l;
        }
    }
    EXPECT_EQ(closing, 1);
    // Tree edges: A-B and A-C apart on their 30 ms circles.
    auto apart = [&](JobId a, JobId b) { return mod(d.jobs[a].shift_s - d.jobs[b].shift_s, 0.03); };
    EXPECT_GT(apart(1, 2), 0.005);
    EXPECT_GT(apart(1, 3), 0.005);
}

// A loop whose links agree: A and B share L1 and L2 (A-L1-B-L2-A), C loads L2
// only. L2, the more contended, is the tree edge and settles A, B and C at
// once: A and B interleaved, C (one arc of four at 50%) on top of one of
// them, excess 0.5 on one arc, score 1 - 0.5/4 = 0.875 (letting A and B
// overlap instead costs at least 1). L1 closes the loop with both its jobs
// shifted, and its own optimum is the same interleaving.
TEST(Cassini, LoopWhoseLinksAgreeLosesNothing) {
    Topology topo = three_racks();
    const LinkId L1 = uplink(topo, 0), L2 = uplink(topo, 1);
    std::vector<JobProfile> jobs = {job(1, 0.02, 0.02, {{L1, 1.0}, {L2, 1.0}}),
                                    job(2, 0.02, 0.02, {{L1, 1.0}, {L2, 1.0}}),
                                    job(3, 0.03, 0.01, {{L2, 1.0}}, 0.5)};
    PolicyOptions opts;
    opts.slot_s = 0.01;
    CassiniPolicy cassini(opts);
    Decisions d = cassini.decide(topo, jobs, 0, EpochReason::Arrival);
    ASSERT_EQ(d.jobs.size(), 3u);
    EXPECT_EQ(cassini.loops(), 1);
    EXPECT_TRUE(cassini.links().at(L1).closes_loop);
    EXPECT_NEAR(mod(d.jobs[1].shift_s - d.jobs[2].shift_s, 0.04), 0.02, 1e-9);
    EXPECT_NEAR(cassini.links().at(L2).best_score, 0.875, 1e-9);
    for (auto& [l, r] : cassini.links()) EXPECT_NEAR(r.final_score, r.best_score, 1e-9) << l;
}

TEST(Cassini, JobsWithoutContendedLinksRunFree) {
    Topology topo = three_racks();
    std::vector<JobProfile> jobs = {job(1, 0.02, 0.02, {{uplink(topo, 0), 1.0}}),
                                    job(2, 0.02, 0.02, {{uplink(topo, 1), 1.0}})};
    CassiniPolicy cassini(PolicyOptions{});
    Decisions d = cassini.decide(topo, jobs, 0, EpochReason::Arrival);
    EXPECT_TRUE(d.jobs.empty());
    EXPECT_TRUE(cassini.links().empty());
}

TEST(Cassini, EpochWithSameJobsKeepsSchedule) {
    Topology topo = three_racks();
    const LinkId L1 = uplink(topo, 0);
    std::vector<JobProfile> jobs = {job(1, 0.02, 0.02, {{L1, 1.0}}), job(2, 0.02, 0.02, {{L1, 1.0}})};
    PolicyOptions opts;
    opts.slot_s = 0.01;
    CassiniPolicy cassini(opts);
    Decisions a = cassini.decide(topo, jobs, 1.0, EpochReason::Arrival);
    Decisions b = cassini.decide(topo, jobs, 2.0, EpochReason::Epoch);
    ASSERT_EQ(b.jobs.size(), 2u);
    EXPECT_EQ(b.jobs[2].origin_s, 1.0);
    EXPECT_EQ(b.jobs[2].shift_s, a.jobs[2].shift_s);
    // A departure (or any change in the job set) reschedules.
    jobs.pop_back();
    Decisions c = cassini.decide(topo, jobs, 3.0, EpochReason::Departure);
    EXPECT_TRUE(c.jobs.empty());
}

TEST(Cassini, RegisteredByName) {
    auto p = make_policy("cassini", PolicyOptions{});
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), "cassini");
    EXPECT_FALSE(p->uses_priorities());
}
