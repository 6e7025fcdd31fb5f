// The gate replayed over a plan's delays (slot_misses.h): which runs of
// collisions make a gated job miss its slots, and which it rides out.
#include <gtest/gtest.h>

#include <vector>

#include "policy/slot_misses.h"

using namespace harmonics;

namespace {

// A 58 ms period whose isolated iteration catches up 1 ms per iteration.
constexpr double kPeriod = 0.058;
constexpr double kCycle = 0.057;

}  // namespace

TEST(SlotMisses, DelaysWithinTheCatchUpKeepEverySlot) {
    EXPECT_EQ(slot_misses(std::vector<double>(12, 0.0008), kPeriod, kCycle, 0, true), 0);
    EXPECT_EQ(slot_misses(std::vector<double>(12, 0.0008), kPeriod, kCycle, 0, false), 0);
}

TEST(SlotMisses, ARunOfLateIterationsMissesEveryThirdSlot) {
    // 1.5 ms per iteration, 0.5 ms past the catch-up: late 0.5 ms at slot 1
    // (on its slot before: goes at once), later again at slot 2 and not
    // catching up with no allowance: held to slot 3. Slots 2 and 5 missed.
    EXPECT_EQ(slot_misses(std::vector<double>(6, 0.0015), kPeriod, kCycle, 0, false), 2);
    // An allowance of 2 ms lets it go late 0.5, 1.0, 1.5 and 2.0 ms: only
    // slot 5 (2.5 ms late) is missed.
    EXPECT_EQ(slot_misses(std::vector<double>(6, 0.0015), kPeriod, kCycle, 0.002, false), 1);
    EXPECT_EQ(slot_misses(std::vector<double>(6, 0.0015), kPeriod, kCycle, 0.005, false), 0);
}

TEST(SlotMisses, ALoneSpikeIsCaughtUp) {
    // 3 ms in one iteration then none: 2 ms late after being on its slot
    // (catching up: goes at once), 1 ms at the next, then back on its slot.
    EXPECT_EQ(slot_misses({0.003, 0, 0, 0}, kPeriod, kCycle, 0, true), 0);
    // Spikes every other iteration: the lateness never grows for long.
    EXPECT_EQ(slot_misses({0.0019, 0, 0.0019, 0}, kPeriod, kCycle, 0, true), 0);
}

TEST(SlotMisses, ACyclicPlanCountsItsSteadyState) {
    // Two iterations of 1.5 ms repeated: late, then held, for ever.
    EXPECT_GT(slot_misses({0.0015, 0.0015}, kPeriod, kCycle, 0, true), 0);
    EXPECT_EQ(slot_misses({}, kPeriod, kCycle, 0, true), 0);
    EXPECT_EQ(slot_misses({0.01}, 0, kCycle, 0, true), 0);
}
