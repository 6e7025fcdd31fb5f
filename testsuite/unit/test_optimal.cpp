// optimal: the slot-grid MILP (CBC) against brute force and harmonics' exact
// search, the time limit and gap, and the policy over a cluster.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

#include "policy/brute_force.h"
#include "policy/optimal.h"
#include "policy/slot_search.h"

using namespace harmonics;

namespace {

// A random slot-grid problem: `jobs` jobs over `links` links, periods drawn
// from divisors of 24 slots (so the hyperperiod stays 24 at most), each job
// busy for one window of its period on one or two links at 40-100% of capacity.
SlotProblem random_problem(std::mt19937& rng, int jobs, int links, int fixed = 0) {
    SlotProblem p;
    p.slot_s = 0.001;
    for (int l = 0; l < links; ++l) p.links.push_back({l, 1e9, l == 0 ? 0.1 : 0.0, l % 2 ? 0.5 : 1.0});
    const int periods[] = {6, 8, 12, 24};
    for (int j = 0; j < jobs; ++j) {
        SlotJob sj;
        sj.id = j + 1;
        sj.period_slots = periods[rng() % 4];
        sj.isolated_period_s = sj.period_slots * p.slot_s * (1 - 0.02 * (rng() % 3));
        int busy = 1 + static_cast<int>(rng() % (sj.period_slots / 2));
        double frac = 0.4 + 0.1 * (rng() % 7);
        int first = static_cast<int>(rng() % links);
        for (int l = 0; l < links; ++l) {
            if (l != first && (rng() % 2 == 0)) continue;
            SlotDemand d;
            d.link = l;
            d.pattern.assign(sj.period_slots, 0.0);
            for (int t = 0; t < busy; ++t) d.pattern[t] = frac;
            if (busy < sj.period_slots) d.pattern[busy] = frac / 2;   // a partly covered slot
            sj.demand.push_back(d);
        }
        for (int s = 0; s < sj.period_slots; s += 1 + sj.period_slots / 8) sj.shifts.push_back(s);
        if (j < fixed) sj.fixed_shift = static_cast<int>(rng() % sj.period_slots);
        p.jobs.push_back(sj);
    }
    EXPECT_TRUE(finalize_hyperperiod(p, 1000));
    return p;
}

Topology two_racks(double oversub) { return Topology::make_two_level(2, 4, 1e9, oversub); }

// A job across racks 0 and 1: computes, then one collective of comm_s that
// fills `fraction` of rack 0's uplink and rack 1's downlink (and back).
JobProfile cross_rack_job(const Topology& topo, JobId id, double compute_s, double comm_s, double fraction) {
    const Switch& a = topo.sw(topo.leaves()[0]);
    const Switch& b = topo.sw(topo.leaves()[1]);
    JobProfile j;
    j.id = id;
    j.compute_s = compute_s;
    CommPhase ph;
    ph.start_offset_s = compute_s;
    ph.alone_s = comm_s;
    ph.bytes_per_edge = fraction * topo.link(a.up).capacity_Bps * comm_s;
    ph.links = {{a.up, 1.0}, {b.down, 1.0}, {b.up, 1.0}, {a.down, 1.0}};
    j.phases.push_back(ph);
    j.isolated_period_s = compute_s + comm_s;
    return j;
}

}  // namespace

// The agreement test: on small instances (<= 6 jobs) harmonics'
// exact search, the MILP and brute force find the same optimum cost.
TEST(Optimal, AgreesWithBruteForceAndExactSearchOnSmallInstances) {
    std::mt19937 rng(2024);
    int nontrivial = 0;
    for (int round = 0; round < 24; ++round) {
        const int jobs = 2 + round % 5;   // 2..6
        SlotProblem p = random_problem(rng, jobs, 1 + round % 3, round % 4 == 3 ? 1 : 0);
        SlotSolution bf = brute_force(p);
        ASSERT_TRUE(bf.optimal) << "round " << round;
        SlotSolution ex = solve_exact(p, 10.0);
        MilpReport rep;
        SlotSolution mi = solve_milp(p, 30.0, &rep);
        EXPECT_TRUE(ex.optimal) << "round " << round;
        EXPECT_TRUE(mi.optimal) << "round " << round;
        EXPECT_NEAR(mi.cost, bf.cost, 1e-7) << "round " << round << " jobs " << jobs;
        EXPECT_NEAR(ex.cost, bf.cost, 1e-7) << "round " << round << " jobs " << jobs;
        EXPECT_NEAR(predicted_cost(p, mi.shift), mi.cost, 1e-12);
        for (size_t i = 0; i < p.jobs.size(); ++i) {
            if (p.jobs[i].fixed_shift >= 0) {
                EXPECT_EQ(mi.shift[i], p.jobs[i].fixed_shift);
            } else {
                EXPECT_TRUE(std::count(p.jobs[i].shifts.begin(), p.jobs[i].shifts.end(), mi.shift[i]));
            }
        }
        if (bf.cost > predicted_cost(p, std::vector<int>(p.jobs.size(), 0)) - 1e-9) continue;
        ++nontrivial;   // the optimum beats "everyone at shift 0"
    }
    EXPECT_GE(nontrivial, 10);   // the instances are not trivially solved by doing nothing
}

TEST(Optimal, ComplementaryJobsGetZeroExcess) {
    // Two jobs, period 10 slots, each filling the link for 5: the optimum
    // interleaves them and costs nothing.
    SlotProblem p;
    p.links.push_back({0, 1e9, 0, 1.0});
    for (int j = 0; j < 2; ++j) {
        SlotJob sj;
        sj.id = j;
        sj.period_slots = 10;
        sj.isolated_period_s = 0.010;
        sj.demand.push_back({0, {1, 1, 1, 1, 1, 0, 0, 0, 0, 0}});
        for (int s = 0; s < 10; ++s) sj.shifts.push_back(s);
        p.jobs.push_back(sj);
    }
    ASSERT_TRUE(finalize_hyperperiod(p, 100));
    SlotSolution s = solve_milp(p, 10.0);
    EXPECT_TRUE(s.optimal);
    EXPECT_NEAR(s.cost, 0.0, 1e-9);
    EXPECT_EQ((s.shift[1] - s.shift[0] + 10) % 10, 5);
}

TEST(Optimal, SolverPrintsNothingOnStdout) {
    std::mt19937 rng(7);
    SlotProblem p = random_problem(rng, 6, 2);
    testing::internal::CaptureStdout();
    SlotSolution s = solve_milp(p, 10.0);
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(out, "");
    EXPECT_FALSE(s.shift.empty());
}

// 40 jobs over 8 links, periods 12-48 slots, windows of random length and
// demand, every link loaded to about its capacity on average: collisions
// cannot all be avoided, and the LP relaxation (jobs spread evenly) bounds
// the excess far below the integer optimum. CBC cannot close that gap in
// half a second: it must stop near the limit with its best answer and
// report the gap.
TEST(Optimal, RespectsTimeLimitAndReportsGap) {
    std::mt19937 rng(99);
    SlotProblem p;
    p.slot_s = 0.001;
    for (int l = 0; l < 8; ++l) p.links.push_back({l, 1e9, 0.0, 0.5});
    const int periods[] = {12, 16, 24, 48};
    for (int j = 0; j < 40; ++j) {
        SlotJob sj;
        sj.id = j;
        sj.period_slots = periods[rng() % 4];
        sj.isolated_period_s = sj.period_slots * p.slot_s;
        double frac = 0.3 + 0.1 * (rng() % 7);
        int busy = 1 + static_cast<int>(rng() % (sj.period_slots / 3));
        for (int l = 0; l < 8; ++l) {
            if (l != j % 8 && rng() % 8) continue;
            SlotDemand d{l, std::vector<double>(sj.period_slots, 0.0)};
            for (int t = 0; t < busy; ++t) d.pattern[t] = frac;
            sj.demand.push_back(d);
        }
        for (int s = 0; s < sj.period_slots; ++s) sj.shifts.push_back(s);
        p.jobs.push_back(sj);
    }
    ASSERT_TRUE(finalize_hyperperiod(p, 1000));
    MilpReport rep;
    const auto t0 = std::chrono::steady_clock::now();
    SlotSolution s = solve_milp(p, 0.5, &rep);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(wall, 3.0);   // 0.5 s of search plus building and CBC's own wind-down
    EXPECT_FALSE(rep.optimal);
    EXPECT_FALSE(s.optimal);
    EXPECT_GT(rep.gap, 0.0);
    EXPECT_LE(rep.gap, 1.0);
    EXPECT_DOUBLE_EQ(s.gap, rep.gap);
    EXPECT_LE(rep.bound, rep.cost + 1e-9);
    EXPECT_NEAR(rep.cost, predicted_cost(p, s.shift), 1e-9);
    EXPECT_GT(rep.rows, 0);
    EXPECT_GT(rep.nonzeros, 0);
    // Far better than every job at shift 0 (what a solver that found nothing would give).
    EXPECT_LT(rep.cost, predicted_cost(p, std::vector<int>(p.jobs.size(), 0)));
}

TEST(Optimal, PolicyFindsClusterOptimum) {
    Topology topo = two_racks(4.0);   // uplinks 1 GB/s: each job alone fills it
    std::vector<JobProfile> jobs = {cross_rack_job(topo, 1, 0.030, 0.010, 1.0),
                                    cross_rack_job(topo, 2, 0.030, 0.010, 1.0),
                                    cross_rack_job(topo, 3, 0.020, 0.020, 0.6)};
    PolicyOptions opts;
    opts.time_limit_s = 10;
    auto base = make_policy("optimal", opts);
    ASSERT_NE(base, nullptr);
    auto* opt = dynamic_cast<OptimalPolicy*>(base.get());
    ASSERT_NE(opt, nullptr);
    Decisions d = opt->decide(topo, jobs, 0, EpochReason::Arrival);
    ASSERT_EQ(d.jobs.size(), 3u);
    EXPECT_TRUE(opt->last_report().optimal);
    EXPECT_EQ(opt->last_report().gap, 0.0);
    EXPECT_EQ(opt->shifts(), 32);   // small enough: harmonics' own candidate count, not thinned
    ASSERT_EQ(opt->last_problems().size(), 1u);   // one component: all share rack 0's uplink
    const SlotProblem& p = opt->last_problems()[0];
    EXPECT_EQ(p.links.size(), 4u);
    SlotSolution bf = brute_force(p);
    ASSERT_TRUE(bf.optimal);
    EXPECT_NEAR(opt->last_report().cost, bf.cost, 1e-7);
    // Periods 40 ms: jobs 1 and 2 (10 ms each) and 3 (20 ms at 60%) fit
    // side by side without excess: the optimum is the stretch penalty alone.
    double stretch = 0;
    for (const SlotJob& j : p.jobs) stretch += j.period_slots * p.slot_s / j.isolated_period_s - 1;
    EXPECT_NEAR(bf.cost, stretch, 1e-9);
    for (auto& [id, jd] : d.jobs) {
        EXPECT_TRUE(jd.gated);
        EXPECT_GE(jd.period_s, 0.040 - 1e-12);
        EXPECT_GE(jd.shift_s, 0.0);
        EXPECT_LT(jd.shift_s, jd.period_s);
    }
    EXPECT_GT(d.sched_time_s, 0.0);
    // The run's tally: one solve, proven, no gap, candidates not thinned.
    // An epoch with the same jobs keeps the last solve and adds none.
    opt->decide(topo, jobs, 1, EpochReason::Epoch);
    std::map<std::string, double> f;
    for (const auto& [k, v] : opt->solver_figures()) f[k] = v;
    EXPECT_EQ(f.at("solves"), 1);
    EXPECT_EQ(f.at("proven_optimal"), 1);
    EXPECT_EQ(f.at("time_limit_s"), 10);
    EXPECT_EQ(f.at("largest_gap_pct"), 0);
    EXPECT_EQ(f.at("fewest_shifts_per_job"), 32);
    EXPECT_GT(f.at("longest_solve_s"), 0);
    EXPECT_TRUE(make_policy("fair", opts)->solver_figures().empty());
}

TEST(Optimal, ContentionFreeClusterLeavesJobsFree) {
    Topology topo = two_racks(1.0);   // uplinks 4 GB/s: two jobs at 25% never collide
    std::vector<JobProfile> jobs = {cross_rack_job(topo, 1, 0.03, 0.01, 0.25),
                                    cross_rack_job(topo, 2, 0.03, 0.01, 0.25)};
    auto p = make_policy("optimal", PolicyOptions{});
    Decisions d = p->decide(topo, jobs, 0, EpochReason::Arrival);
    EXPECT_TRUE(d.jobs.empty());
}

TEST(Optimal, ListedByName) {
    auto names = policy_names();
    EXPECT_NE(std::find(names.begin(), names.end(), "optimal"), names.end());
}
