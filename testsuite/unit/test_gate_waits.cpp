// The wait a new gate costs a running job once (policy/gate_waits.h), and
// the Local Scheduler weighing it over the time the job has left.
#include <gtest/gtest.h>

#include "policy/gate_waits.h"
#include "policy/harmonics_local.h"
#include "unit/harmonics_fixture.h"

using namespace harmonics;
using harmonics::testing::gated;
using harmonics::testing::periodic_job;
using harmonics::testing::search_options;
using harmonics::testing::two_racks;

namespace {

JobProfile job_at(double period_s, double last_collective_s, double end_s) {
    JobProfile j;
    j.id = 1;
    j.isolated_period_s = period_s;
    j.last_collective_s = last_collective_s;
    j.end_s = end_s;
    return j;
}

}  // namespace

TEST(GateWaits, NextCollectiveIsTheLatestOnePeriodsLater) {
    JobProfile j = job_at(0.5, 100.2, 0);
    EXPECT_NEAR(next_collective_s(j, 100.0), 100.2, 1e-12);   // still ahead
    EXPECT_NEAR(next_collective_s(j, 101.0), 101.2, 1e-12);
    EXPECT_NEAR(next_collective_s(j, 101.2), 101.2, 1e-12);
    j.measured_period_s = 0.6;   // measured wins over isolated
    EXPECT_NEAR(next_collective_s(j, 101.0), 101.4, 1e-12);
    EXPECT_LT(next_collective_s(JobProfile{}, 101.0), 0);     // never reported
}

TEST(GateWaits, AFreeJobWaitsFromItsNextCollectiveAGatedOneFromItsSlot) {
    const JobProfile j = job_at(1.0, 10.3, 0);
    // Free: its next collective at 11.3; slots at 0.5 + k -> waits 0.2 s.
    EXPECT_NEAR(first_slot_wait_s(j, nullptr, 0.5, 1.0, 11.0), 0.2, 1e-9);
    const JobDecision free_before;
    EXPECT_NEAR(first_slot_wait_s(j, &free_before, 0.5, 1.0, 11.0), 0.2, 1e-9);
    // Gated on slots at 7.4 + k (origin 7, shift 0.4): to 0.5 + k waits 0.1 s;
    // to 0.3 + k most of a period; to its own slots nothing.
    const JobDecision before = gated(7.0, 0.4, 1.0);
    EXPECT_NEAR(first_slot_wait_s(j, &before, 0.5, 1.0, 11.0), 0.1, 1e-9);
    EXPECT_NEAR(first_slot_wait_s(j, &before, 0.3, 1.0, 11.0), 0.9, 1e-9);
    EXPECT_NEAR(first_slot_wait_s(j, &before, 3.4, 1.0, 11.0), 0.0, 1e-9);
    // Gated on 0.9 s slots from 7.4: its next at 11.0 (7.4 + 4 x 0.9); new
    // 1.0 s slots at 0.5 + k wait from there, 0.5 s.
    const JobDecision shorter = gated(7.0, 0.4, 0.9);
    EXPECT_NEAR(first_slot_wait_s(j, &shorter, 0.5, 1.0, 10.8), 0.5, 1e-9);
    // Nothing known of where it is: half a period on average.
    EXPECT_NEAR(first_slot_wait_s(JobProfile{}, nullptr, 0.5, 1.0, 11.0), 0.5, 1e-12);
}

TEST(GateWaits, AWaitIsChargedOverTheTimeLeftAndNotWithoutAnEnd) {
    const JobProfile j = job_at(0.5, 0, 40.0);
    EXPECT_NEAR(time_left_s(j, 10.0), 30.0, 1e-12);
    EXPECT_NEAR(wait_charge(j, 0.3, 10.0), 0.01, 1e-12);
    // Past its end (the limit not yet enforced): one period left, at least.
    EXPECT_NEAR(time_left_s(j, 45.0), 0.5, 1e-12);
    EXPECT_NEAR(wait_charge(j, 0.25, 45.0), 0.5, 1e-12);
    // No time limit known: nothing is charged.
    EXPECT_EQ(wait_charge(job_at(0.5, 0, 0), 0.3, 10.0), 0.0);
}

namespace {

// Rack 0's leaf with two 100 ms rings whose 50 ms bursts fill its uplink,
// their collectives 10 ms apart at `now`: gated on complementary slots, one
// of them waits at least 40 ms for its first.
LeafProblem colliding_pair(const Topology& topo, double now, double end_s) {
    const SwitchId leaf = topo.leaves()[0];
    const std::vector<LinkId> links = leaf_links(topo, leaf);
    LeafProblem pb;
    pb.leaf = leaf;
    pb.now_s = now;
    for (JobId id : {1, 2}) {
        JobProfile j = periodic_job(topo, id, 0.100, 0.050, links, 1.0);
        j.last_collective_s = now - 0.1 + 0.01 * id;
        j.end_s = end_s;
        pb.jobs.push_back(j);
    }
    return pb;
}

bool all_gated(const LeafResult& r) {
    for (const auto& [id, d] : r.jobs)
        if (!d.gated) return false;
    return !r.jobs.empty();
}

}  // namespace

TEST(LocalScheduler, AGateWhoseFirstWaitTheJobsCannotRecoverIsNotTaken) {
    const Topology topo = two_racks();
    const double now = 1000;
    const LocalScheduler ls(search_options());
    // A long life left: the waits cost next to nothing, the slots are taken.
    LeafResult far = ls.decide(topo, colliding_pair(topo, now, now + 3600));
    EXPECT_TRUE(all_gated(far)) << far.explain;
    // A period or two left: the first slots' waits cost more than the
    // collisions they save (about a third of a period each).
    LeafResult near = ls.decide(topo, colliding_pair(topo, now, now + 0.15));
    EXPECT_EQ(near.free_jobs, 2) << near.explain;
    EXPECT_NE(near.explain.find(" waits "), std::string::npos) << near.explain;
    // The same without their end known, or with the charge off: gated.
    EXPECT_TRUE(all_gated(ls.decide(topo, colliding_pair(topo, now, 0)))) << "no end known";
    LocalTuning off;
    off.charge_waits = false;
    EXPECT_TRUE(all_gated(LocalScheduler(search_options(), off).decide(topo, colliding_pair(topo, now, now + 0.15))));
    // Gated already, kept where they are: no wait, still gated near the end.
    LeafProblem kept = colliding_pair(topo, now, now + 0.15);
    kept.previous = far.jobs;
    LeafResult stays = ls.decide(topo, kept);
    EXPECT_TRUE(all_gated(stays)) << stays.explain;
    for (const auto& [id, d] : stays.jobs) EXPECT_TRUE(same_schedule(d, far.jobs.at(id))) << "job " << id;
}
