// The absorbing plan (LocalTuning::absorb_measuring): a leaf whose harmonic
// plan is refused only for its collisions with a job that never holds
// (measuring only) gates its jobs on periods long enough to absorb them.
// The papers' testbed with one of its five rings measuring is the case.
#include <gtest/gtest.h>

#include "policy/harmonics_local.h"
#include "policy/policy.h"
#include "sim/engine.h"
#include "sim/scenario.h"

using namespace harmonics;

namespace {

// testbed-paper with job `measuring` (1-3 are VGG16, 4-5 BERT-large) never
// holding its collectives.
std::vector<sim::SimJob> testbed_with_measuring(sim::Scenario& s, JobId measuring) {
    std::vector<sim::SimJob> jobs = sim::prepare_jobs(s);
    for (sim::SimJob& j : jobs)
        if (j.id == measuring) j.profile.holds = false;
    return jobs;
}

double mean_slowdown(const sim::RunResult& r) {
    double s = 0;
    for (const sim::JobResult& j : r.jobs) s += j.mean_slowdown();
    return s / r.jobs.size();
}

double simulated(const sim::Scenario& s, const std::vector<sim::SimJob>& jobs, std::unique_ptr<Policy> p) {
    sim::RunResult r = sim::simulate(s.topo, jobs, p.get(), sim::EngineConfig{});
    for (const sim::JobResult& j : r.jobs) EXPECT_EQ(j.iterations_done, j.iterations) << "job " << j.id;
    return mean_slowdown(r);
}

// Rack 1's leaf as the coordinator hands it over: every job there, the
// measuring one fixed as running free.
LeafProblem first_leaf(const sim::Scenario& s, const std::vector<sim::SimJob>& jobs) {
    LeafProblem pb;
    pb.leaf = s.topo.leaves()[0];
    for (const sim::SimJob& j : jobs) {
        pb.jobs.push_back(j.profile);
        if (!j.profile.holds) pb.fixed[j.id] = JobDecision{};
    }
    return pb;
}

PolicyOptions roomy() {
    PolicyOptions o;
    o.local_budget_s = 1.0;   // what the search finds, not what a busy host leaves it
    return o;
}

}  // namespace

TEST(AbsorbingPlan, LeafGatesAroundAMeasuringJobWithinItsSlack) {
    sim::Scenario s = sim::builtin_scenario("testbed-paper");
    const std::vector<sim::SimJob> jobs = testbed_with_measuring(s, 1);
    const LeafProblem pb = first_leaf(s, jobs);
    const LocalScheduler local(roomy());
    const LeafResult r = local.decide(s.topo, pb);
    EXPECT_NE(r.explain.find("rejected: collisions exceed the slack"), std::string::npos) << r.explain;
    EXPECT_NE(r.explain.find("; absorbing "), std::string::npos) << r.explain;
    EXPECT_NE(r.explain.find(" chosen"), std::string::npos) << r.explain;
    EXPECT_EQ(r.jobs.count(1), 0u);   // not the leaf's to decide
    // The four that hold are gated, and the collisions the plan predicts
    // (the measuring job's among them) fit within the margin of their slack.
    LeafProblem decided = pb;
    for (const auto& [id, d] : r.jobs) {
        EXPECT_TRUE(d.gated) << "job " << id;
        decided.fixed[id] = d;
    }
    EXPECT_EQ(r.jobs.size(), 4u);
    for (const auto& [id, delay] : local.collision_delays(s.topo, decided)) {
        if (id == 1) continue;
        const JobProfile& j = pb.jobs[id - 1];
        EXPECT_LE(slack_share(delay, r.jobs.at(id).period_s, iteration_period_s(j)), local.tuning().slack_margin + 1e-9)
            << "job " << id << " delay " << delay;
    }
}

TEST(AbsorbingPlan, NeverTriedWhenEveryJobHolds) {
    sim::Scenario s = sim::builtin_scenario("testbed-paper");
    const std::vector<sim::SimJob> jobs = sim::prepare_jobs(s);
    const LeafResult r = LocalScheduler(roomy()).decide(s.topo, first_leaf(s, jobs));
    EXPECT_EQ(r.explain.find("absorbing"), std::string::npos) << r.explain;
}

TEST(AbsorbingPlan, OneMeasuringRingNoLongerSwitchesTheTestbedsGatesOff) {
    // Without the absorbing plan every leaf ran free (1.238, like fair's
    // 1.246); cassini, gating all five regardless, gets 1.16.
    sim::Scenario s = sim::builtin_scenario("testbed-paper");
    const std::vector<sim::SimJob> jobs = testbed_with_measuring(s, 1);
    const double fair = simulated(s, jobs, make_policy("fair", PolicyOptions{}));
    const double harmonics = simulated(s, jobs, make_harmonics_policy(PolicyOptions{}));
    LocalTuning off;
    off.absorb_measuring = false;
    const double without = simulated(s, jobs, make_harmonics_policy(PolicyOptions{}, off));
    EXPECT_GT(fair, 1.2);
    EXPECT_GT(without, 1.2);
    EXPECT_LT(harmonics, 1.10);
}
