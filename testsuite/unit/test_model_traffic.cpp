// Collectives mapped onto links: bytes, multiplicities and isolated periods
// worked out by hand on small trees.
#include <gtest/gtest.h>

#include <map>

#include "model/traffic.h"

using namespace harmonics;

namespace {

ModelProfile test_model(double grad_bytes, double compute_s, double overlap) {
    ModelProfile m;
    m.name = "test";
    m.grad_bytes = grad_bytes;
    m.compute_s = compute_s;
    m.overlap = overlap;
    return m;
}

std::vector<NodeId> nodes(const Topology& t, std::initializer_list<const char*> names) {
    std::vector<NodeId> out;
    for (const char* n : names) out.push_back(t.find_node(n));
    return out;
}

std::map<std::string, double> by_name(const Topology& t, const CommPhase& ph) {
    std::map<std::string, double> m;
    for (const LinkUse& u : ph.links) m[t.link(u.link).name] = u.multiplicity;
    return m;
}

JobSpec spec(int gpus_per_node, CollectivePattern p = CollectivePattern::Ring) {
    JobSpec s;
    s.id = 7;
    s.gpus_per_node = gpus_per_node;
    s.pattern = p;
    return s;
}

}  // namespace

TEST(Traffic, RingBytesPerRank) {
    EXPECT_DOUBLE_EQ(ring_allreduce_bytes_per_rank(100, 4), 150);
    EXPECT_DOUBLE_EQ(ring_allreduce_bytes_per_rank(100, 2), 100);
    EXPECT_DOUBLE_EQ(ring_allreduce_bytes_per_rank(100, 1), 0);
    EXPECT_DOUBLE_EQ(ring_allreduce_bytes_per_rank(1e9, 10), 1.8e9);
}

TEST(Traffic, OneNodeJobHasNoNetworkPhase) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 2.0);
    JobProfile p = make_profile(t, spec(8), test_model(1e9, 0.2, 0.5), nodes(t, {"n3"}));
    EXPECT_TRUE(p.phases.empty());
    EXPECT_DOUBLE_EQ(p.isolated_period_s, 0.2);
    ASSERT_EQ(p.leaves.size(), 1u);
    EXPECT_EQ(p.leaves[0], t.find_switch("rack1"));
}

TEST(Traffic, CrossRackRingCrossesEachUplinkAndDownlinkOnce) {
    // 3 racks of 4; NIC 12.5 GB/s; uplinks 4·12.5/8 = 6.25 GB/s. The placement
    // is given interleaved: the ring must still go rack by rack
    // (n1 n2 | n5 | n9 n10), crossing each rack boundary once each way.
    Topology t = Topology::make_two_level(3, 4, 12.5e9, 8.0);
    JobProfile p = make_profile(t, spec(2), test_model(1e9, 0.1, 0.25), nodes(t, {"n9", "n1", "n5", "n10", "n2"}));
    ASSERT_EQ(p.phases.size(), 1u);
    const CommPhase& ph = p.phases[0];
    // n = 5 nodes x 2 GPUs = 10 ranks: 2·9/10·1e9.
    EXPECT_DOUBLE_EQ(ph.bytes_per_edge, 1.8e9);
    auto m = by_name(t, ph);
    for (const char* sw : {"rack1", "rack2", "rack3"}) {
        EXPECT_DOUBLE_EQ(m[std::string(sw) + ":uplink"], 1.0) << sw;
        EXPECT_DOUBLE_EQ(m[std::string(sw) + ":downlink"], 1.0) << sw;
    }
    for (const char* n : {"n1", "n2", "n5", "n9", "n10"}) {
        EXPECT_DOUBLE_EQ(m[std::string(n) + ":up"], 1.0) << n;
        EXPECT_DOUBLE_EQ(m[std::string(n) + ":down"], 1.0) << n;
    }
    EXPECT_EQ(ph.links.size(), 16u);  // 5 NICs x 2 + 3 leaves x 2
    // Bottleneck: an uplink at 6.25 GB/s carrying one edge.
    EXPECT_DOUBLE_EQ(ph.alone_s, 1.8e9 / 6.25e9);
    // Comm may start after (1 - 0.25)·0.1 s; period = 0.075 + 0.288.
    EXPECT_DOUBLE_EQ(ph.start_offset_s, 0.075);
    EXPECT_DOUBLE_EQ(p.isolated_period_s, 0.075 + 0.288);
    EXPECT_EQ(p.nodes, nodes(t, {"n1", "n2", "n5", "n9", "n10"}));
    EXPECT_EQ(p.leaves.size(), 3u);
}

TEST(Traffic, BytesAreConserved) {
    // Every ring edge leaves one NIC and enters one: the NIC uplinks together
    // carry nodes x bytes_per_edge, and a leaf's uplink exactly the edges
    // that leave the leaf (bytes on the link = multiplicity x bytes_per_edge).
    Topology t = Topology::make_two_level(4, 4, 12.5e9, 2.0);
    JobProfile p = make_profile(t, spec(4), test_model(3e8, 0.05, 0.0),
                                nodes(t, {"n1", "n2", "n3", "n6", "n7", "n14"}));
    ASSERT_EQ(p.phases.size(), 1u);
    const CommPhase& ph = p.phases[0];
    double nic_up = 0, nic_down = 0, uplinks = 0;
    for (const LinkUse& u : ph.links) {
        const Link& l = t.link(u.link);
        if (l.kind == LinkKind::NodeUp) nic_up += u.multiplicity * ph.bytes_per_edge;
        if (l.kind == LinkKind::NodeDown) nic_down += u.multiplicity * ph.bytes_per_edge;
        if (l.kind == LinkKind::SwitchUp) uplinks += u.multiplicity * ph.bytes_per_edge;
    }
    EXPECT_DOUBLE_EQ(nic_up, 6 * ph.bytes_per_edge);
    EXPECT_DOUBLE_EQ(nic_down, 6 * ph.bytes_per_edge);
    // Racks 1, 2, 4 are involved: three edges leave a rack.
    EXPECT_DOUBLE_EQ(uplinks, 3 * ph.bytes_per_edge);
    EXPECT_DOUBLE_EQ(ph.bytes_per_edge, ring_allreduce_bytes_per_rank(3e8, 24));
}

TEST(Traffic, RingInsideOneLeafLoadsOnlyNics) {
    Topology t = Topology::make_two_level(2, 4, 10e9, 4.0);
    JobProfile p = make_profile(t, spec(1), test_model(1e9, 1.0, 1.0), nodes(t, {"n1", "n2"}));
    ASSERT_EQ(p.phases.size(), 1u);
    auto m = by_name(t, p.phases[0]);
    EXPECT_EQ(m.size(), 4u);  // two edges: n1 -> n2 and back
    EXPECT_DOUBLE_EQ(m["n1:up"], 1.0);
    EXPECT_DOUBLE_EQ(m["n2:down"], 1.0);
    // n = 2 ranks: each edge carries S; the NIC limits: 1e9 / 10e9.
    EXPECT_DOUBLE_EQ(p.phases[0].alone_s, 0.1);
    // Full overlap: comm runs from 0 to 0.1 inside the 1 s of compute.
    EXPECT_DOUBLE_EQ(p.phases[0].start_offset_s, 0.0);
    EXPECT_DOUBLE_EQ(p.isolated_period_s, 1.0);
    // No overlap: comm starts after compute.
    JobProfile q = make_profile(t, spec(1), test_model(1e9, 1.0, 0.0), nodes(t, {"n1", "n2"}));
    EXPECT_DOUBLE_EQ(q.isolated_period_s, 1.1);
}

TEST(Traffic, DeeperTreeCrossesPodUplinkOnceEachWay) {
    // root -> pod1 (rackA, rackB), pod2 (rackC). Nodes given in an order that
    // would cross pod1's uplink four times if not sorted by the tree.
    Topology t;
    SwitchId root = t.add_switch("root"), pod1 = t.add_switch("pod1"), pod2 = t.add_switch("pod2");
    SwitchId ra = t.add_switch("rackA"), rb = t.add_switch("rackB"), rc = t.add_switch("rackC");
    t.set_parent(pod1, root);
    t.set_parent(pod2, root);
    t.set_parent(ra, pod1);
    t.set_parent(rb, pod1);
    t.set_parent(rc, pod2);
    t.add_node("a1", ra);
    t.add_node("a2", ra);
    t.add_node("b1", rb);
    t.add_node("c1", rc);
    t.add_node("c2", rc);
    t.set_node_bandwidth(10e9);
    t.finalize();
    JobProfile p = make_profile(t, spec(1), test_model(1e9, 0.1, 0.0), nodes(t, {"a1", "c1", "b1", "c2", "a2"}));
    ASSERT_EQ(p.phases.size(), 1u);
    auto m = by_name(t, p.phases[0]);
    EXPECT_DOUBLE_EQ(m["pod1:uplink"], 1.0);
    EXPECT_DOUBLE_EQ(m["pod1:downlink"], 1.0);
    EXPECT_DOUBLE_EQ(m["pod2:uplink"], 1.0);
    EXPECT_DOUBLE_EQ(m["rackA:uplink"], 1.0);
    EXPECT_DOUBLE_EQ(m["rackB:downlink"], 1.0);
    EXPECT_DOUBLE_EQ(m["rackC:uplink"], 1.0);
    EXPECT_EQ(p.leaves, (std::vector<SwitchId>{ra, rb, rc}));
}

TEST(Traffic, HierarchicalHasThreeSequentialPhases) {
    // Rack1: n1 n2 (k=2), rack2: n5 n6 n7 (k=3); 2 GPUs per node; S = 6e8.
    // Intra: rack1 ranks r=4 send 3/4·S, rack2 r=6 send 5/6·S = 5e8, the
    //   phase's bytes_per_edge; rack1's edges weigh (3/4)/(5/6) = 0.9.
    // Inter: K = 3 shard rings (n1-n5, n2-n6, n1-n7), L = 2 leaves, each edge
    //   2·(1/2)·S/3 = 2e8; rack uplinks carry 3 edges, n1's NIC 2.
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 1.0);  // uplinks 50 GB/s
    JobProfile p = make_profile(t, spec(2, CollectivePattern::Hierarchical), test_model(6e8, 0.1, 0.5),
                                nodes(t, {"n1", "n2", "n5", "n6", "n7"}));
    ASSERT_EQ(p.phases.size(), 3u);
    const CommPhase &rs = p.phases[0], &ar = p.phases[1], &ag = p.phases[2];
    EXPECT_DOUBLE_EQ(rs.bytes_per_edge, 5e8);
    auto m = by_name(t, rs);
    EXPECT_DOUBLE_EQ(m["n1:up"], 0.9);
    EXPECT_DOUBLE_EQ(m["n2:down"], 0.9);
    EXPECT_DOUBLE_EQ(m["n5:up"], 1.0);
    EXPECT_EQ(m.count("rack1:uplink"), 0u);
    EXPECT_DOUBLE_EQ(rs.alone_s, 5e8 / 12.5e9);
    EXPECT_DOUBLE_EQ(ar.bytes_per_edge, 2e8);
    m = by_name(t, ar);
    EXPECT_DOUBLE_EQ(m["rack1:uplink"], 3.0);
    EXPECT_DOUBLE_EQ(m["rack2:downlink"], 3.0);
    EXPECT_DOUBLE_EQ(m["rack2:uplink"], 3.0);
    EXPECT_DOUBLE_EQ(m["n1:up"], 2.0);
    EXPECT_DOUBLE_EQ(m["n1:down"], 2.0);
    EXPECT_DOUBLE_EQ(m["n2:up"], 1.0);
    EXPECT_DOUBLE_EQ(m["n7:down"], 1.0);
    // n1's NIC at 12.5/2 is slower than an uplink at 50/3.
    EXPECT_DOUBLE_EQ(ar.alone_s, 2e8 / 6.25e9);
    EXPECT_DOUBLE_EQ(ag.bytes_per_edge, rs.bytes_per_edge);
    EXPECT_DOUBLE_EQ(ag.alone_s, rs.alone_s);
    EXPECT_DOUBLE_EQ(p.isolated_period_s, 0.05 + 0.04 + 0.032 + 0.04);
}

TEST(Traffic, HierarchicalInOneLeafHasNoInterLeafPhase) {
    Topology t = Topology::make_two_level(2, 4, 12.5e9, 1.0);
    JobProfile p = make_profile(t, spec(4, CollectivePattern::Hierarchical), test_model(1e9, 0.1, 0.0),
                                nodes(t, {"n1", "n2"}));
    ASSERT_EQ(p.phases.size(), 2u);
    for (const CommPhase& ph : p.phases)
        for (const LinkUse& u : ph.links) EXPECT_TRUE(t.link(u.link).kind == LinkKind::NodeUp ||
                                                      t.link(u.link).kind == LinkKind::NodeDown);
    // Reduce-scatter + all-gather over 8 ranks: 2 x 7/8·S, as a ring would send.
    EXPECT_DOUBLE_EQ(p.phases[0].bytes_per_edge + p.phases[1].bytes_per_edge, ring_allreduce_bytes_per_rank(1e9, 8));
}

TEST(Traffic, HierarchicalAcrossSingleNodeLeavesIsOnlyTheInterPhase) {
    Topology t = Topology::make_two_level(3, 2, 12.5e9, 1.0);
    JobProfile p = make_profile(t, spec(8, CollectivePattern::Hierarchical), test_model(9e8, 0.1, 0.0),
                                nodes(t, {"n1", "n3", "n5"}));
    ASSERT_EQ(p.phases.size(), 1u);
    EXPECT_DOUBLE_EQ(p.phases[0].bytes_per_edge, ring_allreduce_bytes_per_rank(9e8, 3));
}

TEST(Traffic, BadPlacementsAreRejected) {
    Topology t = Topology::make_two_level(2, 2, 12.5e9, 1.0);
    ModelProfile m = test_model(1e9, 0.1, 0.0);
    EXPECT_THROW(make_profile(t, spec(1), m, {}), std::invalid_argument);
    EXPECT_THROW(make_profile(t, spec(1), m, {0, 0}), std::invalid_argument);
    EXPECT_THROW(make_profile(t, spec(1), m, {0, 99}), std::invalid_argument);
    EXPECT_THROW(make_profile(t, spec(0), m, {0, 1}), std::invalid_argument);
}
