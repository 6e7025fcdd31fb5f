// The emulated fabric: collectives alone run at their isolated speed, two
// collectives sharing an uplink each get half of it.
#include <gtest/gtest.h>

#include <cmath>

#include "../../contrib/emulator/fabric_model.h"
#include "model/traffic.h"

using namespace harmonics;

namespace {
// 2 racks x 2 nodes, 1 GB/s NICs, uplinks 2:1 oversubscribed (1 GB/s).
Topology small_fabric() { return Topology::make_two_level(2, 2, 1e9, 2.0); }

CommPhase ring_phase(const Topology& t, std::vector<NodeId> nodes, double bytes) {
    JobSpec spec;
    spec.nodes = static_cast<int>(nodes.size());
    spec.gpus_per_node = 1;
    ModelProfile m;
    m.grad_bytes = bytes;
    return make_profile(t, spec, m, nodes).phases.at(0);
}
}  // namespace

TEST(FabricModel, CollectiveAloneTakesItsIsolatedTime) {
    Topology t = small_fabric();
    emu::FabricModel f(t);
    CommPhase p = ring_phase(t, {t.find_node("n1"), t.find_node("n3")}, 1e9);
    f.start(7, 1, p, 0.0);
    EXPECT_TRUE(f.advance(0.999).empty());
    auto done = f.advance(1.5);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].job, 7);
    EXPECT_NEAR(done[0].end_s, p.alone_s, 1e-9);
    EXPECT_NEAR(p.alone_s, 1.0, 1e-9);
}

TEST(FabricModel, TwoCollectivesOnOneUplinkShareIt) {
    Topology t = small_fabric();
    emu::FabricModel f(t);
    f.start(1, 1, ring_phase(t, {t.find_node("n1"), t.find_node("n3")}, 1e9), 0.0);
    f.start(2, 1, ring_phase(t, {t.find_node("n2"), t.find_node("n4")}, 1e9), 0.0);
    auto done = f.advance(10.0);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_NEAR(done[0].end_s, 2.0, 1e-9);
    EXPECT_NEAR(done[1].end_s, 2.0, 1e-9);
}

TEST(FabricModel, APhaseDueBeforeAStartEndsOnTimeAndLeavesTheLinkFree) {
    // The server reads an ENTER before it advanced past job 1's end (1 s):
    // job 1 still ends at 1 s, and job 2 has the uplink to itself.
    Topology t = small_fabric();
    emu::FabricModel f(t);
    f.start(1, 1, ring_phase(t, {t.find_node("n1"), t.find_node("n3")}, 1e9), 0.0);
    f.start(2, 1, ring_phase(t, {t.find_node("n2"), t.find_node("n4")}, 1e9), 1.25);
    EXPECT_EQ(f.in_flight(), 1u);
    auto done = f.advance(1.25);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].job, 1);
    EXPECT_NEAR(done[0].end_s, 1.0, 1e-9);
    done = f.advance(10.0);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_NEAR(done[0].end_s, 2.25, 1e-9);
}

TEST(FabricModel, LateArrivalSpeedsUpWhenTheFirstLeaves) {
    Topology t = small_fabric();
    emu::FabricModel f(t);
    f.start(1, 1, ring_phase(t, {t.find_node("n1"), t.find_node("n3")}, 1e9), 0.0);
    f.start(2, 1, ring_phase(t, {t.find_node("n2"), t.find_node("n4")}, 1e9), 0.5);
    auto done = f.advance(10.0);
    ASSERT_EQ(done.size(), 2u);
    // Job 1: 0.5 GB alone, then 0.5 GB at half speed -> ends at 1.5 s.
    // Job 2: 0.5 GB at half speed by 1.5 s, then 0.5 GB alone -> ends at 2.0 s.
    EXPECT_NEAR(done[0].end_s, 1.5, 1e-9);
    EXPECT_NEAR(done[1].end_s, 2.0, 1e-9);
    EXPECT_EQ(f.in_flight(), 0u);
}

TEST(FabricModel, OneNodeJobFinishesAtOnce) {
    Topology t = small_fabric();
    emu::FabricModel f(t);
    EXPECT_FALSE(std::isfinite(f.next_completion_s()));
    f.start(3, 9, CommPhase{}, 2.0);  // a job on one node: nothing crosses the fabric
    auto done = f.advance(2.0);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].seq, 9u);
    EXPECT_NEAR(done[0].end_s, 2.0, 1e-12);
}

TEST(FabricModel, JobInsideOneLeafLeavesTheUplinkAlone) {
    // 2 racks x 3 nodes: n1-n3 under rack1, n4-n6 under rack2; 2 GB/s NICs
    // and 3:1 oversubscribed (2 GB/s) uplinks.
    Topology t = Topology::make_two_level(2, 3, 2e9, 3.0);
    emu::FabricModel f(t);
    CommPhase cross = ring_phase(t, {t.find_node("n1"), t.find_node("n4")}, 2e9);
    f.start(1, 1, cross, 0.0);
    f.start(2, 1, ring_phase(t, {t.find_node("n2"), t.find_node("n3")}, 2e9), 0.0);
    auto done = f.advance(10.0);
    ASSERT_EQ(done.size(), 2u);
    for (const emu::Completion& c : done) EXPECT_NEAR(c.end_s, 1.0, 1e-9) << "job " << c.job;
    EXPECT_NEAR(cross.alone_s, 1.0, 1e-9);
}
