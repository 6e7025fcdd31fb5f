// The release rule shared by the simulator's gate and the NCCL hook
// (policy/release.h): wait for a slot when early, go at once when a little
// late, wait for the next slot when late by more than the tolerance.
#include <gtest/gtest.h>

#include "policy/release.h"
#include "unit/harmonics_fixture.h"

using namespace harmonics;
using harmonics::testing::gated;

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

TEST(Release, LateBeyondTheGapGoesOnlyWhileCatchingUp) {
    // The plan leaves 8 ms behind this ring before the next one's slot;
    // the share of the period a catching-up job may be late is 25 ms.
    JobDecision d = gated(10.0, 0.02, 0.1);
    d.late_s = 0.008;
    EXPECT_NEAR(late_allowance_s(d, 0.25), 0.008, 1e-12);
    ReleaseMemory mem;
    // Within the gap: go at once (and remember how late).
    EXPECT_NEAR(next_release_s(d, 10.427, mem, 0.25), 10.427, 1e-12);
    EXPECT_NEAR(mem.late_s, 0.007, 1e-12);
    // Beyond the gap, later than last time: the ring would run into the
    // next one's slot and stay late; it waits for its own next slot.
    EXPECT_NEAR(next_release_s(d, 10.539, mem, 0.25), 10.62, 1e-12);
    EXPECT_NEAR(mem.late_s, 0.0, 1e-12);
    // A first slip after a release on the slot: goes, and so does the next
    // iteration while it is less late (a re-plan's new shift is such a slip).
    EXPECT_NEAR(next_release_s(d, 10.64, mem, 0.25), 10.64, 1e-12);
    EXPECT_NEAR(next_release_s(d, 10.735, mem, 0.25), 10.735, 1e-12);
    // Slipping further: waits.
    EXPECT_NEAR(next_release_s(d, 10.836, mem, 0.25), 10.92, 1e-12);
    // Beyond the share even on a first slip: waits.
    EXPECT_NEAR(next_release_s(d, 10.946, mem, 0.25), 11.02, 1e-12);
    // No gap at all: only catching up goes.
    d.late_s = 0;
    ReleaseMemory late_before;
    late_before.late_s = 0.001;
    EXPECT_NEAR(next_release_s(d, 10.4201, late_before, 0.25), 10.4201, 1e-9);
    EXPECT_NEAR(next_release_s(d, 10.5202, late_before, 0.25), 10.62, 1e-12);
    // A wide gap is capped at the share; unknown (< 0) is the share.
    d.late_s = 0.09;
    EXPECT_NEAR(late_allowance_s(d, 0.25), 0.025, 1e-12);
    d.late_s = -1;
    EXPECT_NEAR(late_allowance_s(d, 0.25), 0.025, 1e-12);
}
