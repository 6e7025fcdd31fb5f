// Steering decision of job_submit/harmonics: which hints a job gets from the
// leaf summary, and that the user's own placement choices are never touched.
// The plugin's source is compiled in directly (it has no Slurm types).
#include "plugins/job_submit/harmonics/steer.cpp"

#include <gtest/gtest.h>

using namespace harmonics;
using steer::decide;
using steer::JobRequest;
using steer::Settings;

namespace {

const double kNow = 1764500000;

state::Summary racks(bool accept1, bool accept2, bool featured = true) {
    state::Summary s;
    s.epoch = 9;
    s.written = kNow - 5;
    s.leaves.push_back({"rack1", "n[1-4]", featured ? "rack1" : "", 4, accept1 ? 0.2 : 0.9, accept1});
    s.leaves.push_back({"rack2", "n[5-8]", featured ? "rack2" : "", 4, accept2 ? 0.2 : 0.9, accept2});
    return s;
}

JobRequest nodes(uint32_t n) {
    JobRequest j;
    j.min_nodes = n;
    return j;
}

}  // namespace

TEST(Steer, JobThatFitsInOneLeafGetsOneSwitchWithBoundedWait) {
    state::Summary s = racks(true, true);
    Settings set;
    set.switch_wait_s = 90;
    steer::Decision d = decide(nodes(3), &s, set, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.wait4switch_s, 90u);
    EXPECT_EQ(d.features, "");   // every uplink accepts: no constraint
    EXPECT_EQ(d.exc_nodes, "");
    EXPECT_EQ(d.tag, "harmonics-steer: one-leaf wait=90s epoch=9");
}

TEST(Steer, RejectedUplinkIsAvoidedByFeatureList) {
    state::Summary s = racks(true, false);
    s.leaves.push_back({"rack3", "n[9-12]", "rack3", 4, 0.1, true});
    steer::Decision d = decide(nodes(3), &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.features, "rack1|rack3");
    EXPECT_EQ(d.tag, "harmonics-steer: one-leaf wait=120s leaves=rack1|rack3 epoch=9");
}

TEST(Steer, LeavesWithoutFeaturesAreAvoidedByExcludedNodes) {
    state::Summary s = racks(false, true, false);
    steer::Decision d = decide(nodes(2), &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.features, "");
    EXPECT_EQ(d.exc_nodes, "n[1-4]");
}

TEST(Steer, JobSpanningLeavesIsKeptOffRejectedUplinks) {
    state::Summary s = racks(true, true);
    s.leaves.push_back({"rack3", "n[9-12]", "rack3", 4, 0.95, false});
    steer::Decision d = decide(nodes(6), &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 0u);  // cannot fit one leaf: no switch request
    EXPECT_EQ(d.features, "rack1|rack2");
    EXPECT_EQ(d.tag, "harmonics-steer: leaves=rack1|rack2 epoch=9");
}

TEST(Steer, JobSpanningLeavesIsLeftAloneWhenAcceptedLeavesAreTooSmall) {
    state::Summary s = racks(true, false);
    steer::Decision d = decide(nodes(6), &s, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_FALSE(d.fail_open);
    EXPECT_EQ(d.why, "spans leaves; accepted leaves hold 4 of 6 nodes");
    s = racks(true, true);
    d = decide(nodes(6), &s, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_EQ(d.why, "spans leaves; every uplink accepts it");
}

TEST(Steer, NoAcceptedLeafStillPrefersOneLeaf) {
    state::Summary s = racks(false, false);
    steer::Decision d = decide(nodes(4), &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.features, "");
}

TEST(Steer, UserPlacementChoicesAreNeverOverridden) {
    state::Summary s = racks(true, false);
    for (int which = 0; which < 5; ++which) {
        JobRequest j = nodes(3);
        bool* flags[] = {&j.user_switches, &j.user_features, &j.user_prefer, &j.user_nodelist, &j.user_exclude};
        *flags[which] = true;
        steer::Decision d = decide(j, &s, Settings{}, kNow);
        EXPECT_FALSE(d.steered) << which;
        EXPECT_EQ(d.req_switch, 0u);
        EXPECT_EQ(d.features, "");
        EXPECT_EQ(d.exc_nodes, "");
        EXPECT_EQ(d.why, "user chose placement");
    }
}

TEST(Steer, SingleNodeAndUnknownSizeJobsAreUntouched) {
    state::Summary s = racks(true, false);
    EXPECT_FALSE(decide(nodes(1), &s, Settings{}, kNow).steered);
    EXPECT_FALSE(decide(nodes(0), &s, Settings{}, kNow).steered);
    EXPECT_EQ(decide(nodes(1), &s, Settings{}, kNow).why, "one node");
}

TEST(Steer, FailsOpenWithoutUsableState) {
    steer::Decision d = decide(nodes(3), nullptr, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_TRUE(d.fail_open);
    state::Summary s = racks(true, true);
    s.written = kNow - 61;
    d = decide(nodes(3), &s, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_TRUE(d.fail_open);
    EXPECT_EQ(d.why, "leaf summary is 61s old (StateMaxAge 60s)");
    EXPECT_EQ(d.fail_kind, "stale");
    s.written = kNow - 59;
    EXPECT_TRUE(decide(nodes(3), &s, Settings{}, kNow).steered);
    state::Summary empty;
    empty.written = kNow;
    d = decide(nodes(3), &empty, Settings{}, kNow);
    EXPECT_TRUE(d.fail_open);
    EXPECT_FALSE(d.steered);
}

TEST(Steer, SteeringOffLeavesEverythingAlone) {
    state::Summary s = racks(true, false);
    Settings set;
    set.steering = false;
    steer::Decision d = decide(nodes(3), &s, set, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_FALSE(d.fail_open);
}

TEST(Steer, OnlyLeavesOfTheJobsPartitionCount) {
    state::Summary s = racks(false, true);   // rack1 rejected, rack2 accepted
    s.partitions.push_back({"all", "n[1-8]", true});
    s.partitions.push_back({"r1", "n[1-4]", false});
    s.partitions.push_back({"mixed", "n[3-6]", false});
    // Default partition spans both leaves: rack1 avoided as without partitions.
    steer::Decision d = decide(nodes(3), &s, Settings{}, kNow);
    EXPECT_EQ(d.features, "rack2");
    // Partition r1 has only rack1: no constraint naming rack2 (Slurm would
    // reject the job), one leaf still preferred.
    JobRequest j = nodes(3);
    j.partition = "r1";
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.features, "");
    EXPECT_EQ(d.exc_nodes, "");
    // Partition mixed holds two nodes of each leaf: 3 nodes fit no leaf and
    // the accepted leaf offers only 2 of them.
    j.partition = "mixed";
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_EQ(d.why, "spans leaves; accepted leaves hold 2 of 3 nodes");
    j.min_nodes = 2;
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.features, "rack2");
    // Several partitions: their union.
    j.min_nodes = 4;
    j.partition = "r1,mixed";
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_EQ(d.req_switch, 1u);   // rack1 has all 4 nodes in the union
    EXPECT_EQ(d.features, "");     // rack2 offers only 2: not enough to avoid rack1
}

TEST(Steer, UnknownPartitionGetsNoLeafConstraint) {
    state::Summary s = racks(false, true);
    s.partitions.push_back({"all", "n[1-8]", true});
    JobRequest j = nodes(3);
    j.partition = "gpu";
    steer::Decision d = decide(j, &s, Settings{}, kNow);
    EXPECT_TRUE(d.steered);
    EXPECT_EQ(d.req_switch, 1u);
    EXPECT_EQ(d.features, "");
    j.min_nodes = 6;
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_FALSE(d.steered);
    EXPECT_EQ(d.why, "spans leaves; partition 'gpu' not in the leaf summary");
    // A malformed hostlist counts as unknown, never as an exception.
    s.partitions[0].nodes = "n[8-1]";
    j.partition = "";
    j.min_nodes = 3;
    d = decide(j, &s, Settings{}, kNow);
    EXPECT_EQ(d.features, "");
}
