// The engine against answers computed by hand: isolated period, fair-share
// collision, gated interleaving, stretched periods, strict priority, bytes
// conserved and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "model/model_library.h"
#include "model/traffic.h"
#include "policy/policy.h"
#include "sim/engine.h"
#include "sim/generator.h"
#include "sim/scenario.h"

using namespace harmonics;
using namespace harmonics::sim;

namespace {

constexpr double kGB = 1e9;

// A two-node ring between nodes a and b: each direction's path, multiplicity 1.
std::vector<LinkUse> ring2(const Topology& t, const std::string& a, const std::string& b) {
    std::vector<LinkUse> uses;
    NodeId x = t.find_node(a), y = t.find_node(b);
    for (LinkId l : t.path(x, y)) uses.push_back({l, 1.0});
    for (LinkId l : t.path(y, x)) uses.push_back({l, 1.0});
    return uses;
}

// compute_s of compute, then (from `offset_s`) one phase of `bytes` per edge.
SimJob job(JobId id, const Topology& t, const std::string& a, const std::string& b, double compute_s,
           double offset_s, double bytes, long iterations, double arrival_s = 0) {
    SimJob j;
    j.id = id;
    j.model = "hand";
    j.arrival_s = arrival_s;
    j.iterations = iterations;
    j.profile.id = id;
    j.profile.nodes = {t.find_node(a), t.find_node(b)};
    j.profile.compute_s = compute_s;
    CommPhase p;
    p.start_offset_s = offset_s;
    p.bytes_per_edge = bytes;
    p.links = ring2(t, a, b);
    j.profile.phases.push_back(p);
    return j;
}

double mean_iteration(const JobResult& r) { return r.iteration_time_s / static_cast<double>(r.iterations_done); }

// 2 racks of 2 nodes, 10 GB/s NICs; oversubscription 2 makes each rack's
// uplink 10 GB/s: one ring's worth, so two cross-rack rings must share it.
Topology two_racks() { return Topology::make_two_level(2, 2, 10 * kGB, 2.0); }

// Job 1 gated on slots at shift + k·period.
EngineConfig gated_job1(double period_s, double shift_s) {
    EngineConfig cfg;
    JobDecision d;
    d.gated = true;
    d.period_s = period_s;
    d.shift_s = shift_s;
    cfg.fixed = {{1, d}};
    return cfg;
}

}  // namespace

TEST(SimEngine, JobAloneReproducesItsIsolatedPeriod) {
    Topology t = two_racks();
    // Compute 0.1 s; the all-reduce starts at 0.05 s (overlap) and moves 1 GB
    // per edge at 10 GB/s: ends at 0.15 s, so the period is 0.15 s.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.05, 1 * kGB, 10)};
    EngineConfig cfg;
    RunResult r = simulate(t, jobs, nullptr, cfg);
    ASSERT_EQ(r.jobs[0].iterations_done, 10);
    EXPECT_NEAR(r.jobs[0].isolated_s, 0.15, 1e-12);
    EXPECT_NEAR(mean_iteration(r.jobs[0]), 0.15, 1e-12);
    EXPECT_NEAR(r.jobs[0].finish_s, 1.5, 1e-12);
    EXPECT_NEAR(r.jobs[0].comm_time_s / 10, 0.1, 1e-12);
    EXPECT_NEAR(r.jobs[0].mean_slowdown(), 1.0, 1e-12);
}

TEST(SimEngine, ModelJobAloneMatchesTheTrafficModel) {
    Topology t = Topology::make_two_level(3, 8, 12.5 * kGB, 3.0);
    JobSpec spec;
    spec.id = 1;
    spec.model = "bert-large";
    spec.nodes = 3;
    const std::vector<NodeId> placement = {t.find_node("n1"), t.find_node("n9"), t.find_node("n17")};
    SimJob j;
    j.id = 1;
    j.iterations = 20;
    j.profile = make_profile(t, spec, *find_model("bert-large"), placement);
    EngineConfig cfg;
    RunResult r = simulate(t, {j}, nullptr, cfg);
    EXPECT_NEAR(mean_iteration(r.jobs[0]), j.profile.isolated_period_s, 1e-9 * j.profile.isolated_period_s);
}

TEST(SimEngine, TwoIdenticalJobsCollidingShareTheUplinkFairly) {
    Topology t = two_racks();
    // Alone: compute 0.1 s, then 1 GB at 10 GB/s = 0.1 s: period 0.2 s.
    // Together both rings cross rack1's 10 GB/s uplink at the same time and
    // get 5 GB/s each: communication takes 0.2 s, the period 0.3 s, slowdown 1.5.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 20),
                                job(2, t, "n2", "n4", 0.1, 0.1, 1 * kGB, 20)};
    RunResult r = simulate(t, jobs, nullptr, EngineConfig{});
    for (const JobResult& x : r.jobs) {
        EXPECT_NEAR(x.isolated_s, 0.2, 1e-12);
        EXPECT_NEAR(mean_iteration(x), 0.3, 1e-9);
        EXPECT_NEAR(x.mean_slowdown(), 1.5, 1e-9);
        EXPECT_NEAR(x.comm_time_s / 20, 0.2, 1e-9);
    }
}

TEST(SimEngine, GatedScheduleInterleavesComplementaryJobsWithNoSlowdown) {
    Topology t = two_racks();
    // Same two jobs; job 2 arrives 0.1 s later. Slots every 0.2 s: job 1's
    // at 0.1 + 0.2k, job 2's at 0.2k, so one communicates while the other
    // computes and neither waits.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 20),
                                job(2, t, "n2", "n4", 0.1, 0.1, 1 * kGB, 20, 0.1)};
    EngineConfig cfg;
    JobDecision d1;
    d1.gated = true;
    d1.period_s = 0.2;
    d1.shift_s = 0.1;
    JobDecision d2 = d1;
    d2.shift_s = 0.0;
    cfg.fixed = {{1, d1}, {2, d2}};
    RunResult r = simulate(t, jobs, nullptr, cfg);
    for (const JobResult& x : r.jobs) {
        EXPECT_NEAR(x.mean_slowdown(), 1.0, 1e-9) << "job " << x.id;
        EXPECT_NEAR(x.comm_time_s / 20, 0.1, 1e-9);
    }
}

TEST(SimEngine, GatedScheduleResolvesAPersistentCollision) {
    Topology t = two_racks();
    // Job 2 arrives 0.05 s after job 1. Free, each collective of job 1 runs
    // alone for 0.05 s, shares the uplink for 0.1 s, and job 2's runs alone
    // for its last 0.05 s: both periods become 0.25 s, every iteration.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 20),
                                job(2, t, "n2", "n4", 0.1, 0.1, 1 * kGB, 20, 0.05)};
    EngineConfig cfg;
    RunResult free = simulate(t, jobs, nullptr, cfg);
    EXPECT_NEAR(free.jobs[0].mean_slowdown(), 1.25, 1e-9);
    EXPECT_NEAR(free.jobs[1].mean_slowdown(), 1.25, 1e-9);
    // Gated: job 1 at 0.1 + 0.2k, job 2 at 0.2k. Job 2 waits 0.05 s once
    // (ready at 0.15, slot at 0.2), then both run at their isolated period.
    JobDecision d1;
    d1.gated = true;
    d1.period_s = 0.2;
    d1.shift_s = 0.1;
    JobDecision d2 = d1;
    d2.shift_s = 0.0;
    cfg.fixed = {{1, d1}, {2, d2}};
    RunResult gated = simulate(t, jobs, nullptr, cfg);
    EXPECT_NEAR(gated.jobs[0].mean_slowdown(), 1.0, 1e-9);
    EXPECT_NEAR(gated.jobs[1].iteration_time_s, 0.25 + 19 * 0.2, 1e-9);
    EXPECT_NEAR(gated.jobs[1].finish_s, 0.05 + 0.25 + 19 * 0.2, 1e-9);
}

TEST(SimEngine, GateHoldsEachIterationToTheScheduledPeriod) {
    Topology t = two_racks();
    // Alone the period is 0.2 s; gated with P = 0.25 s (origin 0, shift 0.1)
    // the first collective waits for 0.1, 0.35, 0.6, ...: every iteration but
    // the first lasts 0.25 s.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 10)};
    EngineConfig cfg;
    JobDecision d;
    d.gated = true;
    d.period_s = 0.25;
    d.shift_s = 0.1;
    cfg.fixed = {{1, d}};
    RunResult r = simulate(t, jobs, nullptr, cfg);
    // First iteration 0.2 s, nine of 0.25 s: the job ends at 2.45 s.
    EXPECT_NEAR(r.jobs[0].finish_s, 0.2 + 9 * 0.25, 1e-9);
    EXPECT_NEAR(r.jobs[0].comm_time_s / 10, 0.1, 1e-9);  // waiting at the gate is not communication
}

TEST(SimEngine, GateCountsLateReleasesAndMissedSlots) {
    Topology t = two_racks();
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 5)};
    // The job gated at (period, shift): its five releases counted.
    auto gated = [&](double period_s, double shift_s) { return simulate(t, jobs, nullptr, gated_job1(period_s, shift_s)); };
    EXPECT_EQ(simulate(t, jobs, nullptr, EngineConfig{}).gated_releases, 0);
    // Early for every slot (P = 0.25 > T = 0.2): held each time, never late.
    RunResult early = gated(0.25, 0.1);
    EXPECT_EQ(early.gated_releases, 5);
    EXPECT_EQ(early.late_releases, 0);
    EXPECT_EQ(early.missed_slots, 0);
    // P = 0.19 < T: slots at 0.09 + 0.19k. Ready at 0.1, 0.3, 0.5 it is
    // 0.01, 0.02, 0.03 s late and goes (within 20 % of P); at 0.7 it is
    // 0.04 late, past 0.038 and not catching up: it waits for 0.85 (its
    // collective ends at 0.95); ready at 1.05 it is 0.01 late again.
    RunResult late = gated(0.19, 0.09);
    EXPECT_EQ(late.gated_releases, 5);
    EXPECT_EQ(late.late_releases, 4);
    EXPECT_EQ(late.missed_slots, 1);
    EXPECT_NEAR(late.jobs[0].finish_s, 0.95 + 0.2, 1e-9);
}

TEST(SimEngine, GateCapBoundsEveryHoldAndGateOffMeasuresOnly) {
    Topology t = two_racks();
    // T = 0.2 s; slots at 0.15 + 0.2k; three iterations. Uncapped: the first
    // collective waits 0.05 s, then every slot is met: 0.25 + 0.2 + 0.2.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 3)};
    EngineConfig cfg = gated_job1(0.2, 0.15);
    EXPECT_NEAR(simulate(t, jobs, nullptr, cfg).jobs[0].finish_s, 0.65, 1e-9);
    // Capped at 0.01 s: held 0.01 s (ready 0.1, slot 0.15): ends 0.21; then
    // ready 0.31, slot 0.35, held 0.01: ends 0.42; ready 0.52, slot 0.55: 0.63.
    cfg.gate_cap_s = 0.01;
    EXPECT_NEAR(simulate(t, jobs, nullptr, cfg).jobs[0].finish_s, 0.63, 1e-9);
    // Gate off: the decision is ignored.
    cfg.gate = false;
    EXPECT_NEAR(simulate(t, jobs, nullptr, cfg).jobs[0].finish_s, 0.6, 1e-9);
}

// A job whose hook only measures never waits at the gate, whatever its
// decision says; the others still do. And mark_measuring marks the share
// asked for, the same jobs for the same seed; mark_measuring_jobs the ids named.
TEST(SimEngine, AJobThatDoesNotHoldIgnoresItsGate) {
    Topology t = two_racks();
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 3)};
    EngineConfig cfg = gated_job1(0.2, 0.15);
    EXPECT_NEAR(simulate(t, jobs, nullptr, cfg).jobs[0].finish_s, 0.65, 1e-9);
    jobs[0].profile.holds = false;
    EXPECT_NEAR(simulate(t, jobs, nullptr, cfg).jobs[0].finish_s, 0.6, 1e-9);

    std::vector<SimJob> many(40, jobs[0]);
    for (std::size_t i = 0; i < many.size(); ++i) {
        many[i].id = static_cast<JobId>(i + 1);
        many[i].profile.holds = true;
    }
    std::vector<SimJob> again = many, other = many;
    EXPECT_EQ(mark_measuring(many, 0.25, 7), 10);
    EXPECT_EQ(mark_measuring(again, 0.25, 7), 10);
    EXPECT_EQ(mark_measuring(other, 0.25, 8), 10);
    int marked = 0, same = 0, same_other = 0;
    for (std::size_t i = 0; i < many.size(); ++i) {
        marked += !many[i].profile.holds;
        same += !many[i].profile.holds && !again[i].profile.holds;
        same_other += !many[i].profile.holds && !other[i].profile.holds;
    }
    EXPECT_EQ(marked, 10);
    EXPECT_EQ(same, 10);
    EXPECT_LT(same_other, 10);
    EXPECT_EQ(mark_measuring(again, 0, 7), 0);
    EXPECT_THROW(mark_measuring(again, 1.5, 7), std::invalid_argument);
    // By id (harmonics-sim --measuring-jobs): exactly those.
    std::vector<SimJob> named = other;
    for (SimJob& j : named) j.profile.holds = true;
    mark_measuring_jobs(named, {3, 40});
    for (const SimJob& j : named) EXPECT_EQ(j.profile.holds, j.id != 3 && j.id != 40) << "job " << j.id;
    EXPECT_THROW(mark_measuring_jobs(named, {41}), std::invalid_argument);
}

// harmonics-sim --start-phases random: the jobs that start at time 0 start
// instead at moments drawn from their first isolated period, the same ones
// for the same seed; a job arriving later keeps its arrival, and the
// simulator counts each job's time from its own start.
// harmonics-sim --pace-spread X: every job's compute and collectives scaled
// by one factor within 1 +- X, the same for one seed, the profile's period
// with them, so the policies' view and the fabric agree.
TEST(SimEngine, PaceSpreadScalesEachJobAsAWholeWithinTheSpread) {
    Scenario s = builtin_scenario("testbed-paper");
    const std::vector<SimJob> base = prepare_jobs(s);
    std::vector<SimJob> paced = base, again = base, other = base;
    EXPECT_EQ(spread_paces(paced, 0.03, 7), static_cast<int>(base.size()));
    spread_paces(again, 0.03, 7);
    spread_paces(other, 0.03, 8);
    int differ = 0;
    for (size_t i = 0; i < base.size(); ++i) {
        const JobProfile& b = base[i].profile;
        const JobProfile& p = paced[i].profile;
        const double x = p.compute_s / b.compute_s;
        EXPECT_GE(x, 0.97 - 1e-12);
        EXPECT_LE(x, 1.03 + 1e-12);
        EXPECT_NEAR(p.isolated_period_s, x * b.isolated_period_s, 1e-12);
        EXPECT_NEAR(isolated_iteration_s(p, s.topo), x * isolated_iteration_s(b, s.topo), 1e-9) << "job " << b.id;
        ASSERT_EQ(p.phases.size(), b.phases.size());
        for (size_t k = 0; k < b.phases.size(); ++k) {
            EXPECT_NEAR(p.phases[k].bytes_per_edge, x * b.phases[k].bytes_per_edge, 1e-6);
            EXPECT_NEAR(p.phases[k].alone_s, x * b.phases[k].alone_s, 1e-12);
        }
        EXPECT_EQ(again[i].profile.compute_s, p.compute_s);
        differ += other[i].profile.compute_s != p.compute_s;
    }
    EXPECT_GT(differ, 0);
    std::vector<SimJob> none = base;
    EXPECT_EQ(spread_paces(none, 0, 7), 0);
    EXPECT_EQ(none[0].profile.compute_s, base[0].profile.compute_s);
    EXPECT_THROW(spread_paces(none, 0.5, 7), std::invalid_argument);
    EXPECT_THROW(spread_paces(none, -0.1, 7), std::invalid_argument);
}

TEST(SimEngine, RandomStartPhasesMoveOnlyTheJobsAtTimeZeroWithinTheirFirstPeriod) {
    Topology t = two_racks();
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 5), job(2, t, "n2", "n4", 0.1, 0.1, 1 * kGB, 5),
                                job(3, t, "n1", "n4", 0.1, 0.1, 1 * kGB, 5, 5.0)};
    const double period = isolated_iteration_s(jobs[0].profile, t);
    std::vector<SimJob> again = jobs, other = jobs;
    EXPECT_EQ(spread_start_phases(jobs, t, 7), 2);
    spread_start_phases(again, t, 7);
    spread_start_phases(other, t, 8);
    for (int i = 0; i < 2; ++i) {
        EXPECT_GE(jobs[i].arrival_s, 0);
        EXPECT_LT(jobs[i].arrival_s, period);
        EXPECT_EQ(jobs[i].arrival_s, again[i].arrival_s);
    }
    EXPECT_NE(jobs[0].arrival_s, jobs[1].arrival_s);
    EXPECT_NE(jobs[0].arrival_s, other[0].arrival_s);
    EXPECT_EQ(jobs[2].arrival_s, 5.0);
    RunResult r = simulate(t, jobs, nullptr, EngineConfig{});
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(r.jobs[i].arrival_s, jobs[i].arrival_s);
        EXPECT_GE(r.jobs[i].finish_s - r.jobs[i].arrival_s, 5 * period - 1e-9);
    }
}

TEST(SimEngine, StrictPriorityServesTheHigherClassFirst) {
    Topology t = two_racks();
    // Job 1 (class 0) takes the whole uplink: 0.1-0.2 s. Job 2 (class 1) gets
    // nothing until then, finishes at 0.3 s; from then on they alternate with
    // no collision: job 2's first iteration 0.3 s, the other nine 0.2 s.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 10),
                                job(2, t, "n2", "n4", 0.1, 0.1, 1 * kGB, 10)};
    EngineConfig cfg;
    JobDecision hi, lo;
    lo.priority = 1;
    cfg.fixed = {{1, hi}, {2, lo}};
    cfg.fixed_priorities = true;
    RunResult r = simulate(t, jobs, nullptr, cfg);
    EXPECT_NEAR(mean_iteration(r.jobs[0]), 0.2, 1e-9);
    EXPECT_NEAR(r.jobs[1].iteration_time_s, 0.3 + 9 * 0.2, 1e-9);
    // The steady state leaves the first quarter (2 of 10) out, the 0.3 s
    // iteration with it: 8 iterations of 0.2 s, 0.1 s of it communication.
    EXPECT_EQ(r.jobs[1].steady_iterations_done, 8);
    EXPECT_NEAR(r.jobs[1].steady_iteration_time_s, 8 * 0.2, 1e-9);
    EXPECT_NEAR(r.jobs[1].steady_comm_time_s, 8 * 0.1, 1e-9);
}

TEST(SimEngine, BytesAreConservedAndNoLinkExceedsItsCapacity) {
    Scenario sc = builtin_scenario("default");
    std::vector<SimJob> jobs = prepare_jobs(sc);
    std::unique_ptr<Policy> fair = make_policy("fair", PolicyOptions{});
    RunResult r = simulate(sc.topo, jobs, fair.get(), EngineConfig{});
    double expected = 0, carried = 0;
    for (const JobResult& x : r.jobs) {
        ASSERT_EQ(x.iterations_done, x.iterations);
        expected += static_cast<double>(x.iterations) * x.bytes_per_iteration;
    }
    for (LinkId l = 0; l < static_cast<LinkId>(r.link_bytes.size()); ++l) {
        carried += r.link_bytes[l];
        EXPECT_LE(r.link_bytes[l], sc.topo.link(l).capacity_Bps * r.end_s * (1 + 1e-9)) << sc.topo.link(l).name;
    }
    EXPECT_GT(expected, 0);
    EXPECT_NEAR(carried, expected, 1e-9 * expected);
}

TEST(SimEngine, BytesInFlightAtTheEndAreCountedUpToThen) {
    Topology t = two_racks();
    // Stop at 0.15 s: the job computed to 0.1 s and moved 0.05 s × 10 GB/s =
    // 0.5 GB per edge over each of its 8 links.
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 10)};
    EngineConfig cfg;
    cfg.end_s = 0.15;
    RunResult r = simulate(t, jobs, nullptr, cfg);
    double carried = 0;
    for (double b : r.link_bytes) carried += b;
    EXPECT_NEAR(carried, 8 * 0.5 * kGB, 1e-3);
    EXPECT_EQ(r.jobs[0].iterations_done, 0);
}

TEST(SimEngine, SameSeedSameResultsDifferentSeedDifferentWorkload) {
    auto run = [](unsigned seed) {
        GeneratorParams p;
        p.racks = 4;
        p.nodes_per_rack = 4;
        p.jobs = 12;
        p.arrival_rate = 1;
        p.min_runtime_s = 5;
        p.max_runtime_s = 20;
        p.seed = seed;
        Scenario sc = generate_scenario(p);
        std::vector<SimJob> jobs = prepare_jobs(sc);
        std::unique_ptr<Policy> fair = make_policy("fair", PolicyOptions{});
        return simulate(sc.topo, jobs, fair.get(), EngineConfig{});
    };
    RunResult a = run(7), b = run(7), c = run(8);
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    EXPECT_EQ(a.events, b.events);
    for (std::size_t j = 0; j < a.jobs.size(); ++j) {
        EXPECT_EQ(a.jobs[j].model, b.jobs[j].model);
        EXPECT_EQ(a.jobs[j].arrival_s, b.jobs[j].arrival_s);
        EXPECT_EQ(a.jobs[j].finish_s, b.jobs[j].finish_s);
        EXPECT_EQ(a.jobs[j].iteration_time_s, b.jobs[j].iteration_time_s);
    }
    bool differs = false;
    for (std::size_t j = 0; j < std::min(a.jobs.size(), c.jobs.size()); ++j)
        differs = differs || a.jobs[j].model != c.jobs[j].model || a.jobs[j].arrival_s != c.jobs[j].arrival_s;
    EXPECT_TRUE(differs);
}

TEST(SimEngine, PolicyIsAskedOnArrivalDepartureAndEveryEpoch) {
    // Counts decision rounds: one job of ~2.45 s alone with 1 s epochs sees an
    // arrival, epochs at 1 and 2 s and a departure.
    struct Counting : Policy {
        std::string name() const override { return "counting"; }
        Decisions decide(const Topology&, const std::vector<JobProfile>& jobs, double, EpochReason why) override {
            reasons.push_back(why);
            sizes.push_back(jobs.size());
            Decisions d;
            d.sched_time_s = 0.002;
            JobDecision g;
            g.gated = true;
            g.period_s = 0.25;
            g.shift_s = 0.1;
            for (const JobProfile& p : jobs) d.jobs[p.id] = g;
            return d;
        }
        std::vector<EpochReason> reasons;
        std::vector<std::size_t> sizes;
    } policy;
    Topology t = two_racks();
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 10)};
    RunResult r = simulate(t, jobs, &policy, EngineConfig{});
    ASSERT_EQ(policy.reasons.size(), 4u);
    EXPECT_EQ(policy.reasons[0], EpochReason::Arrival);
    EXPECT_EQ(policy.reasons[1], EpochReason::Epoch);
    EXPECT_EQ(policy.reasons[2], EpochReason::Epoch);
    EXPECT_EQ(policy.reasons[3], EpochReason::Departure);
    EXPECT_EQ(policy.sizes[3], 0u);
    EXPECT_NEAR(r.jobs[0].finish_s, 0.2 + 9 * 0.25, 1e-9);  // its decision was applied
    EXPECT_NEAR(r.sched_ms_per_epoch(), 2.0, 1e-12);
}

namespace {
// Gates every job it is shown on slots at first-seen + 0.3 s + k·0.5 s, and
// records when it was asked and about which jobs.
class RecordingPolicy : public Policy {
public:
    std::string name() const override { return "recording"; }
    Decisions decide(const Topology&, const std::vector<JobProfile>& jobs, double now_s, EpochReason) override {
        Decisions d;
        for (const JobProfile& j : jobs) {
            seen.emplace_back(now_s, j.id);
            if (!first_seen.count(j.id)) first_seen[j.id] = now_s;
            JobDecision g;
            g.gated = true;
            g.period_s = 0.5;
            g.shift_s = 0.3;
            g.origin_s = first_seen[j.id];
            d.jobs[j.id] = g;
        }
        return d;
    }
    std::vector<std::pair<double, JobId>> seen;
    std::map<JobId, double> first_seen;
};
}  // namespace

// The daemons learn a job from its hooks' rhythm a few iterations in: with
// learn_iterations 3 the policy first sees the job when its third iteration
// ends (0.6 s, 0.2 s each alone), decides then, and that decision gates the
// fourth iteration on. Known at arrival (0), every iteration is gated.
TEST(SimEngine, APolicyKnowsAJobOnlyAfterItsLearningIterations) {
    Topology t = two_racks();
    std::vector<SimJob> jobs = {job(1, t, "n1", "n3", 0.1, 0.1, 1 * kGB, 6)};
    EngineConfig cfg;
    cfg.learn_iterations = 3;
    RecordingPolicy learnt;
    RunResult r = simulate(t, jobs, &learnt, cfg);
    ASSERT_FALSE(learnt.seen.empty());
    EXPECT_NEAR(learnt.seen.front().first, 0.6, 1e-9);
    for (const auto& [when, id] : learnt.seen) EXPECT_GE(when, 0.6 - 1e-9);
    // Free 0.6 s; then released at 0.9 (ready 0.7), 1.4 (ready 1.1, late
    // 0.2 s past 0.9: beyond the fifth of a period, it waits) and 1.9.
    EXPECT_NEAR(r.jobs[0].finish_s, 2.0, 1e-9);

    cfg.learn_iterations = 0;
    RecordingPolicy known;
    RunResult k = simulate(t, jobs, &known, cfg);
    ASSERT_FALSE(known.seen.empty());
    EXPECT_NEAR(known.seen.front().first, 0.0, 1e-9);
    // Slots at 0.3, 0.8, ...: 0.4 s for the first iteration, 0.5 s for each other.
    EXPECT_NEAR(k.jobs[0].finish_s, 0.4 + 5 * 0.5, 1e-9);
}
