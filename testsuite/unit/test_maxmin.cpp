// Max-min sharing: small cases with answers worked out by hand, and random
// cases checked against the definition (every flow has a bottleneck link).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "model/maxmin.h"

using namespace harmonics;

namespace {

std::vector<double> rates(const std::vector<double>& cap, const std::vector<std::vector<LinkUse>>& uses,
                          const std::vector<int>& prio = {}, bool strict = false) {
    std::vector<FlowDemand> flows;
    for (std::size_t i = 0; i < uses.size(); ++i) flows.push_back(FlowDemand{&uses[i], prio.empty() ? 0 : prio[i]});
    return maxmin_rates(cap, flows, strict);
}

}  // namespace

TEST(MaxMin, TwoFlowsOneLinkSplitEvenly) {
    auto r = rates({10.0}, {{{0, 1}}, {{0, 1}}});
    EXPECT_DOUBLE_EQ(r[0], 5.0);
    EXPECT_DOUBLE_EQ(r[1], 5.0);
}

TEST(MaxMin, ThreeFlowsTwoLinksWithBottleneck) {
    // Link 0 (10) carries f0, f1; link 1 (4) carries f1, f2. Link 1 fills
    // first at 2 each; f0 takes what f1 leaves on link 0: 10 - 2 = 8.
    auto r = rates({10.0, 4.0}, {{{0, 1}}, {{0, 1}, {1, 1}}, {{1, 1}}});
    EXPECT_DOUBLE_EQ(r[0], 8.0);
    EXPECT_DOUBLE_EQ(r[1], 2.0);
    EXPECT_DOUBLE_EQ(r[2], 2.0);
}

TEST(MaxMin, MultiplicityTwoConsumesTwice) {
    // 2t + t = 12 on the shared link: both flows at 4, f0 using 8 of it.
    auto r = rates({12.0}, {{{0, 2}}, {{0, 1}}});
    EXPECT_DOUBLE_EQ(r[0], 4.0);
    EXPECT_DOUBLE_EQ(r[1], 4.0);
}

TEST(MaxMin, MultiplicityAloneDividesCapacity) {
    auto r = rates({12.0, 100.0}, {{{0, 3}, {1, 1}}});
    EXPECT_DOUBLE_EQ(r[0], 4.0);
}

TEST(MaxMin, StrictPriorityServesClassZeroFirst) {
    // f0 (class 0) on A; f1 (class 1) on A and B; f2 (class 1) on B.
    // Fair: everyone 5. Strict: f0 takes all of A, f1 starves, f2 gets B.
    std::vector<std::vector<LinkUse>> uses = {{{0, 1}}, {{0, 1}, {1, 1}}, {{1, 1}}};
    auto fair = rates({10.0, 10.0}, uses, {0, 1, 1}, false);
    EXPECT_DOUBLE_EQ(fair[0], 5.0);
    EXPECT_DOUBLE_EQ(fair[1], 5.0);
    EXPECT_DOUBLE_EQ(fair[2], 5.0);
    auto strict = rates({10.0, 10.0}, uses, {0, 1, 1}, true);
    EXPECT_DOUBLE_EQ(strict[0], 10.0);
    EXPECT_DOUBLE_EQ(strict[1], 0.0);
    EXPECT_DOUBLE_EQ(strict[2], 10.0);
}

TEST(MaxMin, StrictPriorityLowerClassGetsTheRemainder) {
    // Class 0 is limited to 3 by link 1, class 1 shares the 7 left on link 0.
    std::vector<std::vector<LinkUse>> uses = {{{0, 1}, {1, 1}}, {{0, 1}}, {{0, 1}}};
    auto r = rates({10.0, 3.0}, uses, {0, 2, 2}, true);
    EXPECT_DOUBLE_EQ(r[0], 3.0);
    EXPECT_DOUBLE_EQ(r[1], 3.5);
    EXPECT_DOUBLE_EQ(r[2], 3.5);
}

TEST(MaxMin, FlowWithoutLinksIsUnlimited) {
    auto r = rates({10.0}, {{}, {{0, 1}}});
    EXPECT_TRUE(std::isinf(r[0]));
    EXPECT_DOUBLE_EQ(r[1], 10.0);
}

TEST(MaxMin, LargeFabricRepeatedCallsAgree) {
    // Only links 5 and 99'999 of a big fabric are used; repeated calls reuse
    // the workspace and must not see each other's state.
    std::vector<double> cap(100000, 1.0);
    cap[5] = 6.0;
    cap[99999] = 2.0;
    std::vector<std::vector<LinkUse>> a = {{{5, 1}}, {{5, 1}, {99999, 1}}};
    std::vector<std::vector<LinkUse>> b = {{{99999, 1}}};
    for (int i = 0; i < 3; ++i) {
        auto ra = rates(cap, a);
        EXPECT_DOUBLE_EQ(ra[0], 4.0);
        EXPECT_DOUBLE_EQ(ra[1], 2.0);
        auto rb = rates(cap, b);
        EXPECT_DOUBLE_EQ(rb[0], 2.0);
    }
}

TEST(MaxMin, UnknownLinkIsAnErrorAndLeavesNoState) {
    std::vector<LinkUse> ok = {{0, 1}}, bad = {{3, 1}};
    std::vector<FlowDemand> f = {FlowDemand{&ok, 0}, FlowDemand{&bad, 0}};
    EXPECT_THROW(maxmin_rates({1.0, 1.0}, f, false), std::invalid_argument);
    auto r = rates({1.0, 1.0}, {{{1, 1}}, {{0, 1}}});
    EXPECT_DOUBLE_EQ(r[0], 1.0);
    EXPECT_DOUBLE_EQ(r[1], 1.0);
}

namespace {

struct Case {
    std::vector<double> cap;
    std::vector<std::vector<LinkUse>> uses;
    std::vector<int> prio;
};

Case random_case(std::mt19937& rng, int classes) {
    Case c;
    int L = 1 + static_cast<int>(rng() % 12), F = 1 + static_cast<int>(rng() % 20);
    c.cap.resize(L);
    for (double& x : c.cap) x = 1 + rng() % 100;
    c.uses.resize(F);
    for (auto& u : c.uses) {
        std::vector<char> on(L, 0);
        int k = 1 + static_cast<int>(rng() % 4);
        for (int j = 0; j < k; ++j) {
            int l = static_cast<int>(rng() % L);
            if (on[l]) continue;
            on[l] = 1;
            u.push_back(LinkUse{l, 1.0 + rng() % 3});
        }
        c.prio.push_back(static_cast<int>(rng() % classes));
    }
    return c;
}

}  // namespace

// Strict priority: within each class the allocation is max-min fair on what
// the higher classes left, i.e. every flow has a link that is full (counting
// higher classes and its own) where no flow of its class has a higher rate.
TEST(MaxMin, RandomStrictPriorityIsFairWithinEachClass) {
    std::mt19937 rng(11);
    for (int round = 0; round < 200; ++round) {
        Case c = random_case(rng, 3);
        auto r = rates(c.cap, c.uses, c.prio, true);
        const int F = static_cast<int>(c.uses.size()), L = static_cast<int>(c.cap.size());
        for (int f = 0; f < F; ++f) {
            std::vector<double> load(L, 0.0);  // classes up to f's
            for (int g = 0; g < F; ++g)
                if (c.prio[g] <= c.prio[f])
                    for (const LinkUse& u : c.uses[g]) load[u.link] += u.multiplicity * r[g];
            bool bottleneck = false;
            for (const LinkUse& u : c.uses[f]) {
                ASSERT_LE(load[u.link], c.cap[u.link] * (1 + 1e-9));
                if (load[u.link] < c.cap[u.link] * (1 - 1e-9)) continue;
                bool highest = true;
                for (int g = 0; g < F; ++g)
                    for (const LinkUse& v : c.uses[g])
                        if (c.prio[g] == c.prio[f] && v.link == u.link && r[g] > r[f] * (1 + 1e-9)) highest = false;
                bottleneck = bottleneck || highest;
            }
            ASSERT_TRUE(bottleneck) << "round " << round << " flow " << f;
        }
    }
}

// The definition of max-min fairness: the allocation is feasible and every
// flow crosses a saturated link on which no flow has a higher rate.
TEST(MaxMin, RandomCasesHaveABottleneckForEveryFlow) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        Case c = random_case(rng, 1);
        const auto& cap = c.cap;
        const auto& uses = c.uses;
        const int L = static_cast<int>(cap.size()), F = static_cast<int>(uses.size());
        auto r = rates(cap, uses);
        std::vector<double> load(L, 0.0);
        for (int f = 0; f < F; ++f)
            for (const LinkUse& u : uses[f]) load[u.link] += u.multiplicity * r[f];
        for (int l = 0; l < L; ++l) ASSERT_LE(load[l], cap[l] * (1 + 1e-9)) << "round " << round;
        for (int f = 0; f < F; ++f) {
            bool bottleneck = false;
            for (const LinkUse& u : uses[f]) {
                if (load[u.link] < cap[u.link] * (1 - 1e-9)) continue;
                bool highest = true;
                for (int g = 0; g < F; ++g)
                    for (const LinkUse& v : uses[g])
                        if (v.link == u.link && r[g] > r[f] * (1 + 1e-9)) highest = false;
                bottleneck = bottleneck || highest;
            }
            ASSERT_TRUE(bottleneck) << "round " << round << " flow " << f;
        }
    }
}
