// Rack-aware placement: best-fit leaf when the job fits in one, fewest leaves
// otherwise.
#include <gtest/gtest.h>

#include "model/placement.h"

using namespace harmonics;

namespace {

// 3 racks of 4 (n1-n4, n5-n8, n9-n12); free: all of rack1, n5 n6 of rack2,
// n9 n10 n11 of rack3.
struct Cluster {
    Topology t = Topology::make_two_level(3, 4, 12.5e9, 2.0);
    std::vector<bool> free = std::vector<bool>(12, false);
    Cluster() {
        for (const char* n : {"n1", "n2", "n3", "n4", "n5", "n6", "n9", "n10", "n11"}) free[t.find_node(n)] = true;
    }
    std::vector<std::string> place(int count) const {
        std::vector<std::string> out;
        for (NodeId n : place_rack_aware(t, free, count)) out.push_back(t.node(n).name);
        return out;
    }
};

using Names = std::vector<std::string>;

}  // namespace

TEST(Placement, OneLeafBestFit) {
    Cluster c;
    EXPECT_EQ(c.place(1), (Names{"n5"}));   // rack2 has the fewest free (2)
    EXPECT_EQ(c.place(2), (Names{"n5", "n6"}));
    EXPECT_EQ(c.place(3), (Names{"n9", "n10", "n11"}));
    EXPECT_EQ(c.place(4), (Names{"n1", "n2", "n3", "n4"}));
}

TEST(Placement, FewestLeavesWhenNoLeafFits) {
    Cluster c;
    // Largest leaf (rack1, 4) then the smallest leaf covering the rest.
    EXPECT_EQ(c.place(5), (Names{"n1", "n2", "n3", "n4", "n5"}));
    EXPECT_EQ(c.place(6), (Names{"n1", "n2", "n3", "n4", "n5", "n6"}));
    EXPECT_EQ(c.place(7), (Names{"n1", "n2", "n3", "n4", "n9", "n10", "n11"}));
    EXPECT_EQ(c.place(9).size(), 9u);
}

TEST(Placement, NotEnoughFreeNodes) {
    Cluster c;
    EXPECT_TRUE(c.place(10).empty());
    EXPECT_TRUE(c.place(0).empty());
}

TEST(Placement, TiesGoToTheFirstLeafInTreeOrder) {
    Topology t = Topology::make_two_level(3, 2, 12.5e9, 1.0);
    std::vector<NodeId> free_list = {t.find_node("n6"), t.find_node("n3"), t.find_node("n4"), t.find_node("n5")};
    auto p = place_rack_aware(t, free_list, 2);
    EXPECT_EQ(p, (std::vector<NodeId>{t.find_node("n3"), t.find_node("n4")}));
    // Both overloads agree.
    std::vector<bool> mask(6, false);
    for (NodeId n : free_list) mask[n] = true;
    EXPECT_EQ(place_rack_aware(t, mask, 2), p);
    EXPECT_EQ(place_rack_aware(t, mask, 3).size(), 3u);
}

TEST(Placement, BadInputIsRejected) {
    Topology t = Topology::make_two_level(2, 2, 12.5e9, 1.0);
    EXPECT_THROW(place_rack_aware(t, std::vector<bool>(3, true), 1), std::invalid_argument);
    EXPECT_THROW(place_rack_aware(t, std::vector<NodeId>{7}, 1), std::invalid_argument);
}
