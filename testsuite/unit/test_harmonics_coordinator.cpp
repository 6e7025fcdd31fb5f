// Harmonics' global coordinator: owners, one decision per cross-leaf job, and
// the harmonics policy as the simulator sees it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "model/model_library.h"
#include "model/traffic.h"
#include "policy/global_coordinator.h"
#include "policy/harmonics_local.h"
#include "unit/harmonics_fixture.h"

using namespace harmonics;
using harmonics::testing::periodic_job;

namespace {

// Random jobs of 2..8 nodes placed anywhere on an 8-rack cluster.
std::vector<JobProfile> random_jobs(const Topology& topo, std::mt19937& rng, int n) {
    const char* models[] = {"resnet50", "vgg16", "resnet101"};
    std::uniform_int_distribution<int> size(2, 8), pick(0, 2);
    std::vector<NodeId> all;
    for (NodeId i = 0; i < static_cast<NodeId>(topo.nodes().size()); ++i) all.push_back(i);
    std::vector<JobProfile> jobs;
    for (int k = 0; k < n; ++k) {
        std::shuffle(all.begin(), all.end(), rng);
        JobSpec spec;
        spec.id = k + 1;
        spec.model = models[pick(rng)];
        spec.nodes = size(rng);
        std::vector<NodeId> placement(all.begin(), all.begin() + spec.nodes);
        const ModelProfile* m = find_model(spec.model);
        EXPECT_NE(m, nullptr);
        jobs.push_back(make_profile(topo, spec, *m, placement));
    }
    return jobs;
}

// The uplinks and downlinks of `leaves`: what a ring across them loads.
std::vector<LinkId> links_of(const Topology& topo, const std::vector<SwitchId>& leaves) {
    std::vector<LinkId> out;
    for (SwitchId s : leaves)
        for (LinkId l : leaf_links(topo, s)) out.push_back(l);
    return out;
}

// Four racks of four nodes under 4:1 uplinks: a ring alone fills one.
struct FourRacks {
    Topology topo = Topology::make_two_level(4, 4, 12.5e9, 4.0);
    std::vector<SwitchId> L = topo.leaves();
    // A job of period T with `comm_s` of communication at `fraction` of the
    // uplink, its ring across `racks` (indices into L).
    JobProfile job(JobId id, double T, double comm_s, std::vector<int> racks, double fraction) const {
        std::vector<SwitchId> leaves;
        for (int r : racks) leaves.push_back(L[r]);
        return periodic_job(topo, id, T, comm_s, links_of(topo, leaves), fraction);
    }
};

// Both gated on one period, shifts at least `burst_s` apart modulo it.
bool apart(const CoordinationResult& x, JobId a, JobId b, double burst_s) {
    const JobDecision &da = x.jobs.at(a), &db = x.jobs.at(b);
    if (!da.gated || !db.gated || da.period_s != db.period_s) return false;
    double d = std::fmod(std::abs(da.origin_s + da.shift_s - db.origin_s - db.shift_s), da.period_s);
    return std::min(d, da.period_s - d) >= burst_s - 1e-9;
}

std::set<SwitchId> loaded_leaves(const Topology& topo, const JobProfile& j) {
    std::set<SwitchId> out;
    for (SwitchId s : topo.leaves())
        if (job_loads(j, leaf_links(topo, s))) out.insert(s);
    return out;
}

}  // namespace

TEST(GlobalCoordinator, OwnerIsTheMostContendedLeaf) {
    Topology topo = Topology::make_two_level(3, 4, 12.5e9, 4.0);
    std::vector<SwitchId> L = topo.leaves();
    auto links = [&](std::vector<SwitchId> ls) {
        std::vector<LinkId> out;
        for (SwitchId s : ls)
            for (LinkId l : leaf_links(topo, s)) out.push_back(l);
        return out;
    };
    // Job 1 spans leaves 0 and 1; leaf 1 also carries job 2 and 3, leaf 0 nothing else.
    std::vector<JobProfile> jobs = {periodic_job(topo, 1, 0.1, 0.04, links({L[0], L[1]}), 0.5),
                                    periodic_job(topo, 2, 0.1, 0.04, links({L[1], L[2]}), 0.5),
                                    periodic_job(topo, 3, 0.1, 0.04, links({L[1], L[2]}), 0.5)};
    std::map<JobId, SwitchId> owners = GlobalCoordinator().assign_owners(topo, jobs);
    ASSERT_EQ(owners.size(), 3u);
    EXPECT_EQ(owners[1], L[1]);
    EXPECT_EQ(owners[2], L[1]);  // ties between leaves 1 and 2 go to the lower id
}

// coordd gives a cross-leaf job its owner once (Coordd::assign_owners); the
// simulator's coordinator keeps it too, through its memory, while other
// jobs come and go: a new owner re-plans the job, and its gate then waits up
// to a period for the new slot.
TEST(GlobalCoordinator, AJobKeepsItsFirstOwnerWhileOthersComeAndGo) {
    FourRacks f;
    const LocalScheduler local(harmonics::testing::search_options());
    const JobProfile one = f.job(1, 0.1, 0.04, {0, 1}, 0.5);
    // At first rack 1 carries jobs 2 and 3 too; then they leave and jobs 4
    // and 5 load rack 0, the most contended of job 1's leaves from then on.
    const std::vector<JobProfile> before = {one, f.job(2, 0.1, 0.04, {1, 2}, 0.5), f.job(3, 0.1, 0.04, {1, 2}, 0.5)};
    const std::vector<JobProfile> after = {one, f.job(4, 0.1, 0.04, {0, 3}, 0.5), f.job(5, 0.1, 0.04, {0, 3}, 0.5)};
    ConflictMemory memory;
    const CoordinationResult first = GlobalCoordinator().plan(f.topo, before, {}, local, 0, &memory);
    EXPECT_EQ(first.owners.at(1), f.L[1]);
    const CoordinationResult kept = GlobalCoordinator().plan(f.topo, after, first.jobs, local, 1, &memory);
    EXPECT_EQ(kept.owners.at(1), f.L[1]);
    EXPECT_EQ(kept.owners.at(4), f.L[0]);
    // Without memory the owners are the contention of the moment.
    const CoordinationResult fresh = GlobalCoordinator().plan(f.topo, after, first.jobs, local, 1, nullptr);
    EXPECT_EQ(fresh.owners.at(1), f.L[0]);
}

TEST(GlobalCoordinator, EveryMultiLeafJobHasExactlyOneDecision) {
    Topology topo = Topology::make_two_level(8, 4, 12.5e9, 4.0);
    std::mt19937 rng(3);
    LocalScheduler local(PolicyOptions{});
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<JobProfile> jobs = random_jobs(topo, rng, 6 + trial % 7);
        GlobalCoordinator coord;
        CoordinationResult r = coord.plan(topo, jobs, {}, local, 0);
        // At most 3 rounds, then at most 3 conflict passes of at most 3 rounds each.
        EXPECT_LE(r.rounds, 3 * (1 + 3));
        for (const JobProfile& j : jobs) {
            std::set<SwitchId> leaves = loaded_leaves(topo, j);
            if (leaves.size() < 2) {
                EXPECT_EQ(r.owners.count(j.id), 0u);
                continue;
            }
            ASSERT_EQ(r.owners.count(j.id), 1u) << "trial " << trial << " job " << j.id;
            SwitchId owner = r.owners.at(j.id);
            EXPECT_TRUE(leaves.count(owner));
            ASSERT_EQ(r.jobs.count(j.id), 1u);
            EXPECT_EQ(r.jobs.at(j.id).owner_leaf, owner);
            // No other leaf decided it: a second run with the owners' decisions fixed agrees.
            for (SwitchId s : leaves) {
                if (s == owner) continue;
                LeafProblem pb;
                pb.leaf = s;
                for (const JobProfile& k : jobs)
                    if (job_loads(k, leaf_links(topo, s))) pb.jobs.push_back(k);
                for (const auto& [id, o] : r.owners)
                    if (o != s && r.jobs.count(id)) pb.fixed[id] = r.jobs.at(id);
                LeafResult lr = local.decide(topo, pb);
                EXPECT_EQ(lr.jobs.count(j.id), 0u);
            }
        }
        // Warm start from its own answer: no scheduled job moves. (A job left
        // free for want of a common period may get one now that its leaf's
        // periods are known, so only gated jobs are held to this.)
        CoordinationResult again = coord.plan(topo, jobs, r.jobs, local, 1);
        EXPECT_EQ(again.unsettled, 0);
        for (const auto& [id, d] : r.jobs) {
            ASSERT_EQ(again.jobs.count(id), 1u);
            if (!d.gated) continue;
            EXPECT_TRUE(same_schedule(again.jobs.at(id), d)) << "trial " << trial << " job " << id;
        }
    }
}

// A cross-leaf job meets gated jobs of other owners on leaves that do not own
// it: after coordination no gated cross-leaf job's collisions with other
// gated jobs, on any of its leaves, take more of its slack than the slack rule
// allows (a sweep of one model scattered over the leaves, where each owner's
// own leaf looked fine and jobs missed slots on the others).
TEST(GlobalCoordinator, NoCrossLeafJobIsGatedPastItsSlackOnAnyOfItsLeaves) {
    Topology topo = Topology::make_two_level(8, 4, 12.5e9, 2.0);
    std::mt19937 rng(7);
    LocalScheduler local(PolicyOptions{});
    int gated_cross = 0, ungated_cross = 0;
    for (int trial = 0; trial < 12; ++trial) {
        const std::vector<JobProfile> jobs = harmonics::testing::scattered_bert_large(topo, rng);
        CoordinationResult r = GlobalCoordinator().plan(topo, jobs, {}, local, 0);
        std::map<JobId, double> worst;
        for (SwitchId s : topo.leaves()) {
            LeafProblem pb;
            pb.leaf = s;
            for (const JobProfile& k : jobs) {
                if (!job_loads(k, leaf_links(topo, s)) || !r.jobs.count(k.id) || !r.jobs.at(k.id).gated) continue;
                pb.jobs.push_back(k);
                pb.fixed[k.id] = r.jobs.at(k.id);
            }
            for (const auto& [id, x] : local.collision_delays(topo, pb)) worst[id] = std::max(worst[id], x);
        }
        for (const JobProfile& j : jobs) {
            if (!r.owners.count(j.id)) continue;
            const JobDecision& d = r.jobs.at(j.id);
            if (!d.gated) {
                ungated_cross++;
                continue;
            }
            gated_cross++;
            EXPECT_LE(worst[j.id], local.tuning().slack_margin * (d.period_s - iteration_period_s(j)) + 1e-9)
                << "trial " << trial << " job " << j.id;
        }
    }
    // Not vacuous: some cross-leaf jobs stay gated.
    EXPECT_GT(gated_cross, 0);
    std::printf("cross-leaf jobs gated %d, free %d\n", gated_cross, ungated_cross);
}

// golden/cross-leaf-conflict as a unit: rack1 and rack2 each pack their two
// jobs with the same shifts, so 1 and 2 meet on rack3, 3 and 4 on rack4. The
// jobs go to the leaves where they meet, which place them apart; with the
// memory, the next epoch keeps those owners and moves no job.
TEST(GlobalCoordinator, JobsCollidingOnALeafThatOwnsNeitherGoThereAndStay) {
    FourRacks f;
    const Topology& topo = f.topo;
    std::vector<JobProfile> jobs = {f.job(1, 0.1, 0.03, {0, 2}, 1.0), f.job(2, 0.1, 0.03, {1, 2}, 1.0),
                                    f.job(3, 0.1, 0.03, {0, 3}, 1.0), f.job(4, 0.1, 0.03, {1, 3}, 1.0)};
    LocalScheduler local(harmonics::testing::search_options());
    GlobalCoordinator coord;
    // Without the conflict pass's outcome: each owner packs its own two.
    ASSERT_EQ(coord.assign_owners(topo, jobs).at(2), f.L[1]);
    ConflictMemory memory;
    CoordinationResult r = coord.plan(topo, jobs, {}, local, 0, &memory);
    EXPECT_EQ(r.owners.at(1), f.L[2]);
    EXPECT_EQ(r.owners.at(3), f.L[3]);
    EXPECT_TRUE(apart(r, 1, 2, 0.03));
    EXPECT_TRUE(apart(r, 3, 4, 0.03));
    CoordinationResult again = coord.plan(topo, jobs, r.jobs, local, 1, &memory);
    for (JobId id : {1, 2, 3, 4}) {
        EXPECT_EQ(again.owners.at(id), r.owners.at(id)) << id;
        EXPECT_TRUE(same_schedule(again.jobs.at(id), r.jobs.at(id))) << id;
    }
}

// A job whose ranks do not hold their collectives (Gate=no) keeps no slot of
// its own: here, with nowhere it would lock (LockPlan tests), it runs free on
// every leaf and is never handed over or adopted, while its neighbours are
// still planned. Four jobs that the conflict pass otherwise gates in pairs;
// job 1 only measures. A leaf-local job that does not hold runs free too.
TEST(GlobalCoordinator, AJobThatDoesNotHoldRunsFreeEverywhere) {
    FourRacks f;
    const Topology& topo = f.topo;
    std::vector<JobProfile> jobs = {f.job(1, 0.1, 0.03, {0, 2}, 1.0), f.job(2, 0.1, 0.03, {1, 2}, 1.0),
                                    f.job(3, 0.1, 0.03, {0, 3}, 1.0), f.job(4, 0.1, 0.03, {1, 3}, 1.0)};
    LocalScheduler local(harmonics::testing::search_options());
    ConflictMemory all;
    const CoordinationResult before = GlobalCoordinator().plan(topo, jobs, {}, local, 0, &all);
    ASSERT_TRUE(before.jobs.at(1).gated);
    jobs[0].holds = false;
    ConflictMemory memory;
    const CoordinationResult r = GlobalCoordinator().plan(topo, jobs, {}, local, 0, &memory);
    EXPECT_FALSE(r.jobs.at(1).gated);
    EXPECT_EQ(r.jobs.at(1).owner_leaf, r.owners.at(1));
    EXPECT_EQ(memory.adopted.count(1), 0u);
    EXPECT_EQ(memory.owner.count(1), 0u);
    EXPECT_TRUE(apart(r, 3, 4, 0.03));   // the pair it leaves is still planned
    // Warm-started from a plan that gated it, it is still free.
    const CoordinationResult again = GlobalCoordinator().plan(topo, jobs, before.jobs, local, 1, &memory);
    EXPECT_FALSE(again.jobs.at(1).gated);

    Topology one = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    const SwitchId L0 = one.leaves()[0];
    // Two jobs on rack 0 only (each ring within it, so no uplink): give them
    // the leaf's links by hand, as periodic_job does for the racks above.
    std::vector<JobProfile> local_jobs = {
        periodic_job(one, 1, 0.1, 0.04, leaf_links(one, L0), 1.0),
        periodic_job(one, 2, 0.1, 0.04, leaf_links(one, L0), 1.0)};
    const CoordinationResult both = GlobalCoordinator().plan(one, local_jobs, {}, local, 0);
    ASSERT_TRUE(both.jobs.at(1).gated && both.jobs.at(2).gated);
    local_jobs[1].holds = false;
    const CoordinationResult m = GlobalCoordinator().plan(one, local_jobs, {}, local, 0);
    ASSERT_EQ(m.jobs.count(2), 1u);
    EXPECT_FALSE(m.jobs.at(2).gated);
}

// A gated job whose measured iterations (net of the gate's holds) keep
// running past its period misses its slots: with free_outrunning the
// coordinator runs it free once it has done so for kOutrunEpochs epochs
// under one decision, and keeps it free for the conflict hold. Within
// keep_tolerance, or without the rule, it stays gated.
TEST(GlobalCoordinator, AGatedJobOutrunningItsPeriodRunsFreeAfterAFewEpochs) {
    Topology one = Topology::make_two_level(2, 4, 12.5e9, 4.0);
    const SwitchId L0 = one.leaves()[0];
    const std::vector<JobProfile> jobs = {periodic_job(one, 1, 0.1, 0.04, leaf_links(one, L0), 1.0),
                                          periodic_job(one, 2, 0.1, 0.04, leaf_links(one, L0), 1.0)};
    LocalTuning off;
    off.free_outrunning = false;
    const LocalScheduler watching(harmonics::testing::search_options());   // on by default
    const LocalScheduler plain(harmonics::testing::search_options(), off);
    // Job 1's gate per epoch (one a second), its measured period `factor`
    // times the period it was given.
    const auto gated = [&](const LocalScheduler& local, double factor) {
        ConflictMemory memory;
        std::map<JobId, JobDecision> previous;
        std::vector<bool> out;
        for (int epoch = 0; epoch < 6; ++epoch) {
            std::vector<JobProfile> now = jobs;
            auto p = previous.find(1);
            if (p != previous.end() && p->second.gated) now[0].measured_period_s = factor * p->second.period_s;
            const CoordinationResult r = GlobalCoordinator().plan(one, now, previous, local, epoch, &memory);
            out.push_back(r.jobs.at(1).gated);
            previous = r.jobs;
        }
        return out;
    };
    // Decided at epoch 0, seen outrunning at 1, 2 and 3 (over ten of its
    // periods): free from 3 on.
    EXPECT_EQ(gated(watching, 1.10), (std::vector<bool>{true, true, true, false, false, false}));
    EXPECT_EQ(gated(watching, 1.02), std::vector<bool>(6, true));
    EXPECT_EQ(gated(plain, 1.10), std::vector<bool>(6, true));
}

TEST(OutrunWatch, CountsEpochsInARowUnderOneDecision) {
    JobDecision a;
    a.gated = true;
    a.period_s = 0.1;
    JobDecision b = a;
    b.period_s = 0.12;
    EXPECT_FALSE(outruns(0, a, 0.03));   // period unknown
    EXPECT_FALSE(outruns(0.102, a, 0.03));
    EXPECT_TRUE(outruns(0.104, a, 0.03));
    EXPECT_FALSE(outruns(0.104, JobDecision{}, 0.03));   // free: nothing to outrun
    OutrunWatch w;   // one look a second; 10 periods of 0.1 s is one second
    EXPECT_FALSE(w.seen(1, a, true, 0));
    EXPECT_FALSE(w.seen(1, a, true, 1));
    EXPECT_FALSE(w.seen(1, b, true, 2));   // a new decision: counted from one
    EXPECT_FALSE(w.seen(1, b, true, 3));
    EXPECT_TRUE(w.seen(1, b, true, 4));
    EXPECT_FALSE(w.seen(1, b, true, 5));   // counted again after each verdict
    EXPECT_FALSE(w.seen(1, b, false, 6));  // one epoch within its period: from nothing
    EXPECT_FALSE(w.seen(1, b, true, 7));
    EXPECT_FALSE(w.seen(1, b, true, 8));
    EXPECT_TRUE(w.seen(1, b, true, 9));
    // Three quick looks are not ten periods: a long period waits for them.
    JobDecision slow = a;
    slow.period_s = 1.16;
    EXPECT_FALSE(w.seen(2, slow, true, 0));
    EXPECT_FALSE(w.seen(2, slow, true, 1));
    EXPECT_FALSE(w.seen(2, slow, true, 2));
    EXPECT_FALSE(w.seen(2, slow, true, 11));
    EXPECT_TRUE(w.seen(2, slow, true, 11.6));
}

// The daemons' origins are wall-clock seconds. A member off window 0 (shift
// 68 ms of a 202.5 ms family) under one decision must be counted epoch after
// epoch: before, origin + shift rounded at 1.8e9 s made the decision differ
// from itself, the count restarted every look and it never left its family.
TEST(OutrunWatch, CountsADecisionWithAWallClockOriginAndAShift) {
    JobDecision d;
    d.gated = true;
    d.period_s = 0.2025;
    d.origin_s = 1796609257.601963282;
    d.shift_s = 0.068;
    EXPECT_TRUE(same_schedule(d, d));
    JobDecision later = d;   // the same gate from an origin whole periods on
    later.origin_s += 7 * d.period_s;
    EXPECT_TRUE(same_schedule(d, later));
    later.shift_s += d.period_s;
    EXPECT_TRUE(same_schedule(d, later));
    JobDecision moved = d;   // a millisecond is another slot
    moved.shift_s += 0.001;
    EXPECT_FALSE(same_schedule(d, moved));
    moved.shift_s = d.shift_s + 1e-5;   // and ten microseconds are not a double's step
    EXPECT_FALSE(same_schedule(d, moved));
    OutrunWatch w;
    const double now = 64882.2;
    EXPECT_FALSE(w.seen(4, d, true, now, kFamilyOutrunS));
    for (int k = 1; k < 150; ++k) EXPECT_FALSE(w.seen(4, d, true, now + 0.2 * k, kFamilyOutrunS)) << k;
    EXPECT_TRUE(w.seen(4, d, true, now + 30, kFamilyOutrunS));
}

// golden/cross-leaf-adopt as a unit: rack1 packs jobs 1 and 2 apart, rack2
// leaves job 3 free (job 4 crosses rack2 nearly all the time), and on rack3,
// which owns none of them, free job 3 takes 1 and 2 past their slack. rack3
// adopts job 3 and gates it in the gap between them; without adoption (a
// coordinator of one pass, which as the last pass adopts nothing) job 3 stays
// free.
TEST(GlobalCoordinator, AFreeJobTakingGatedJobsPastTheirSlackIsAdoptedWhereItCollides) {
    FourRacks f;
    const Topology& topo = f.topo;
    std::vector<JobProfile> jobs = {f.job(1, 0.1, 0.03, {0, 2}, 0.6), f.job(2, 0.1, 0.03, {0, 2}, 0.6),
                                    f.job(3, 0.1, 0.03, {1, 2}, 0.6), f.job(4, 0.05, 0.045, {1, 3}, 1.0),
                                    f.job(5, 0.05, 0.045, {0, 3}, 0.3)};
    LocalScheduler local(harmonics::testing::search_options());
    GlobalCoordinator coord;
    ASSERT_EQ(coord.assign_owners(topo, jobs).at(3), f.L[1]);
    ConflictMemory memory;
    CoordinationResult r = coord.plan(topo, jobs, {}, local, 0, &memory);
    EXPECT_EQ(r.owners.at(3), f.L[2]);
    EXPECT_EQ(memory.adopted.at(3), f.L[2]);
    EXPECT_TRUE(apart(r, 1, 3, 0.03));
    EXPECT_TRUE(apart(r, 2, 3, 0.03));
    // One pass, the last: no adoption.
    CoordinationResult owners_only = GlobalCoordinator(1).plan(topo, jobs, {}, local, 0);
    EXPECT_FALSE(owners_only.jobs.at(3).gated);
    // The next epoch keeps the adopter and the schedule.
    CoordinationResult again = coord.plan(topo, jobs, r.jobs, local, 1, &memory);
    EXPECT_EQ(again.owners.at(3), f.L[2]);
    EXPECT_TRUE(same_schedule(again.jobs.at(3), r.jobs.at(3)));
}

// golden/cross-leaf as a unit: rack4 adopts free job 5 and gates it on a
// drifting plan that takes a gated job past its slack on rack2; the guest
// goes back to running free (held there by the memory), and every job that
// was gated before it came stays gated.
TEST(GlobalCoordinator, AnAdoptedJobInConflictRunsFreeBeforeTheJobsItMeets) {
    FourRacks f;
    const Topology& topo = f.topo;
    std::vector<JobProfile> jobs = {f.job(1, 0.1, 0.025, {0, 1}, 1.0), f.job(2, 0.1, 0.025, {0, 2}, 1.0),
                                    f.job(3, 0.2, 0.04, {0, 1, 2}, 1.0), f.job(4, 0.1, 0.03, {2, 3}, 1.0),
                                    f.job(5, 0.05, 0.01, {1, 3}, 1.0)};
    LocalScheduler local(harmonics::testing::search_options());
    ConflictMemory memory;
    CoordinationResult r = GlobalCoordinator().plan(topo, jobs, {}, local, 0, &memory);
    ASSERT_EQ(memory.adopted.count(5), 1u);
    EXPECT_FALSE(r.jobs.at(5).gated);
    EXPECT_GT(memory.free_until_s.at(5), 0);
    for (JobId id : {1, 2, 3, 4}) EXPECT_TRUE(r.jobs.at(id).gated) << id;
}

TEST(HarmonicsPolicy, IsRegisteredAndReportsClusterTime) {
    Topology topo = Topology::make_two_level(8, 4, 12.5e9, 4.0);
    std::mt19937 rng(9);
    std::vector<JobProfile> jobs = random_jobs(topo, rng, 10);
    std::unique_ptr<Policy> p = make_policy("harmonics", PolicyOptions{});
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), "harmonics");
    Decisions d = p->decide(topo, jobs, 0, EpochReason::Arrival);
    EXPECT_GT(d.sched_time_s, 0);
    EXPECT_FALSE(d.jobs.empty());
    // A departure drops the job from the decisions.
    JobId gone = jobs.back().id;
    jobs.pop_back();
    Decisions after = p->decide(topo, jobs, 1, EpochReason::Departure);
    EXPECT_EQ(after.jobs.count(gone), 0u);
}
