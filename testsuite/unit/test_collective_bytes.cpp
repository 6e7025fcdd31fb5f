// Bytes per ring edge of each collective, the conversion the NCCL hook uses
// for its reports and the traffic model uses for its phases: both must agree.
#include <gtest/gtest.h>

#include "model/collective_bytes.h"
#include "model/traffic.h"

using namespace harmonics;

namespace {
constexpr double S = 64.0 * 1024 * 1024;  // a 64 MiB buffer
}

TEST(CollectiveBytes, AllReduceOverEightRanksIsTwoSevenEighths) {
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::AllReduce, S, 8), 2.0 * 7.0 / 8.0 * S);
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::AllReduce, S, 2), S);
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::AllReduce, 1e9, 10), 1.8e9);
    EXPECT_DOUBLE_EQ(collective_buffer_bytes(Collective::AllReduce, S, 8), S);  // NCCL's count is the buffer
}

TEST(CollectiveBytes, GatherAndScatterCountPerRankChunks) {
    // ncclAllGather(sendcount = c) over 8 ranks: output 8c, each edge 7c.
    const double c = 3.0 * 1024 * 1024;
    for (Collective k : {Collective::AllGather, Collective::ReduceScatter}) {
        EXPECT_DOUBLE_EQ(collective_buffer_bytes(k, c, 8), 8 * c);
        EXPECT_DOUBLE_EQ(ring_edge_bytes(k, collective_buffer_bytes(k, c, 8), 8), 7 * c);
        EXPECT_DOUBLE_EQ(ring_edge_bytes(k, S, 4), 0.75 * S);  // (n-1)/n of the whole buffer
    }
}

TEST(CollectiveBytes, RootedAndPointToPointCarryTheBuffer) {
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::Broadcast, S, 16), S);
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::Reduce, S, 3), S);
    EXPECT_DOUBLE_EQ(ring_edge_bytes(Collective::SendRecv, S, 2), S);
    EXPECT_DOUBLE_EQ(collective_buffer_bytes(Collective::Broadcast, S, 16), S);
}

TEST(CollectiveBytes, OneRankHasNoEdge) {
    for (Collective k : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                         Collective::Broadcast, Collective::Reduce}) {
        EXPECT_EQ(ring_edge_bytes(k, S, 1), 0.0);
        EXPECT_EQ(ring_edge_bytes(k, S, 0), 0.0);
    }
    EXPECT_DOUBLE_EQ(collective_buffer_bytes(Collective::AllGather, S, 1), S);
}

TEST(CollectiveBytes, TrafficModelUsesTheSameRingBytes) {
    // A ring job of 2 nodes x 4 GPUs: its one phase carries, per edge, what
    // the hook reports for an 8-rank all-reduce of the gradient buffer.
    Topology t = Topology::make_two_level(2, 4, 10e9, 4.0);
    JobSpec spec;
    spec.id = 1;
    spec.gpus_per_node = 4;
    ModelProfile m;
    m.name = "test";
    m.grad_bytes = S;
    m.compute_s = 0.1;
    JobProfile p = make_profile(t, spec, m, {t.find_node("n1"), t.find_node("n5")});
    ASSERT_EQ(p.phases.size(), 1u);
    EXPECT_DOUBLE_EQ(p.phases[0].bytes_per_edge, ring_edge_bytes(Collective::AllReduce, S, 8));
    EXPECT_DOUBLE_EQ(p.phases[0].bytes_per_edge, 1.75 * S);
    for (int n = 1; n <= 64; ++n)
        EXPECT_EQ(ring_allreduce_bytes_per_rank(S, n), ring_edge_bytes(Collective::AllReduce, S, n));
}
