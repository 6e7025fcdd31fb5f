#include <gtest/gtest.h>

#include "topology/topology.h"

using namespace harmonics;

TEST(Topology, TwoLevelTreeLinksAndCapacities) {
    Topology t = Topology::make_two_level(3, 8, 12.5e9, 2.0);
    EXPECT_EQ(t.nodes().size(), 24u);
    EXPECT_EQ(t.leaves().size(), 3u);
    // 24 NICs x 2 + 3 leaves x 2 (the spine is the root: no uplink).
    EXPECT_EQ(t.links().size(), 54u);
    SwitchId r1 = t.find_switch("rack1");
    ASSERT_GE(r1, 0);
    EXPECT_DOUBLE_EQ(t.link(t.sw(r1).up).capacity_Bps, 8 * 12.5e9 / 2.0);
}

TEST(Topology, PathInsideLeafCrossesOnlyNics) {
    Topology t = Topology::make_two_level(2, 4, 1e9, 1.0);
    NodeId a = t.find_node("n1"), b = t.find_node("n2");
    auto p = t.path(a, b);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0], t.node(a).up);
    EXPECT_EQ(p[1], t.node(b).down);
}

TEST(Topology, PathAcrossLeavesUsesUplinkAndDownlink) {
    Topology t = Topology::make_two_level(2, 4, 1e9, 1.0);
    NodeId a = t.find_node("n1"), b = t.find_node("n5");
    auto p = t.path(a, b);
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(t.link(p[1]).name, "rack1:uplink");
    EXPECT_EQ(t.link(p[2]).name, "rack2:downlink");
}

TEST(Topology, LoopIsRejected) {
    Topology t;
    SwitchId a = t.add_switch("a"), b = t.add_switch("b");
    t.add_node("n1", a);
    t.set_parent(a, b);
    t.set_parent(b, a);
    EXPECT_THROW(t.finalize(), std::invalid_argument);
}
