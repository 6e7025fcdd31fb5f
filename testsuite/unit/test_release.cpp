// The release rule shared by the simulator's gate and the NCCL hook
// (policy/release.h): wait for a slot when early, go at once when a little
// late, wait for the next slot when late by more than the tolerance.
#include <gtest/gtest.h>

#include "policy/release.h"

using namespace harmonics;

namespace {

JobDecision gated(double origin, double shift, double period) {
    JobDecision d;
    d.gated = true;
    d.origin_s = origin;
    d.shift_s = shift;
    d.period_s = period;
    return d;
}

}  // namespace

TEST(Release, FreeJobsGoWhenReady) {
    JobDecision d;  // not gated
    EXPECT_DOUBLE_EQ(next_release_s(d, 3.21, 0.25), 3.21);
    JobDecision no_period = gated(0, 0.01, 0);
    no_period.period_s = 0;
    EXPECT_DOUBLE_EQ(next_release_s(no_period, 3.21, 0.25), 3.21);
}

TEST(Release, EarlyJobWaitsForItsSlot) {
    // Slots at 10.02 + k * 0.1.
    JobDecision d = gated(10.0, 0.02, 0.1);
    EXPECT_NEAR(next_release_s(d, 10.40, 0.25), 10.42, 1e-12);
    EXPECT_NEAR(next_release_s(d, 10.419, 0.25), 10.42, 1e-12);
    // On the slot (within rounding): go.
    EXPECT_NEAR(next_release_s(d, 10.42, 0.25), 10.42, 1e-12);
    // Before the grid starts (origin + shift), the first slot.
    EXPECT_NEAR(next_release_s(d, 9.90, 0.25), 10.02, 1e-12);
    EXPECT_NEAR(next_release_s(d, 10.01, 0.25), 10.02, 1e-12);
}

TEST(Release, SlightlyLateJobGoesAtOnce) {
    JobDecision d = gated(10.0, 0.02, 0.1);
    // 5 ms late for 10.42 with a 25 ms tolerance: no lost period.
    EXPECT_NEAR(next_release_s(d, 10.425, 0.25), 10.425, 1e-12);
    // Exactly at the tolerance still goes.
    EXPECT_NEAR(next_release_s(d, 10.445, 0.25), 10.445, 1e-12);
}

TEST(Release, VeryLateJobWaitsForTheNextSlot) {
    JobDecision d = gated(10.0, 0.02, 0.1);
    EXPECT_NEAR(next_release_s(d, 10.46, 0.25), 10.52, 1e-12);
    // Tolerance 0 is the strict gate: any lateness waits for the next slot.
    EXPECT_NEAR(next_release_s(d, 10.425, 0.0), 10.52, 1e-12);
}

TEST(Release, DefaultToleranceIsAFifthOfThePeriod) {
    JobDecision d = gated(0, 0, 0.2);
    EXPECT_NEAR(next_release_s(d, 0.2 + 0.039), 0.239, 1e-12);
    EXPECT_NEAR(next_release_s(d, 0.2 + 0.041), 0.4, 1e-12);
}
