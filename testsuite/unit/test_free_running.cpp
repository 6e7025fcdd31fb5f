// The queueing estimate of jobs running free on one link (free_running.h).
#include <gtest/gtest.h>

#include "policy/free_running.h"

using harmonics::FreeRunner;
using harmonics::free_running_slowdowns;

TEST(FreeRunning, TwoJobsFillingTheLinkMatchTheHandWorkedLaw) {
    // Each alone fills the link. Scaled to its own iteration, job i is on the
    // link w_i of the time; the four sets weigh o1 o2, w1 o2, o1 w2 and
    // 2 w1 w2, so Z = 1 + w1 w2 and each job's iteration is Z times its own.
    const double w1 = 10.0 / 101, w2 = 10.0 / 173;
    std::vector<FreeRunner> jobs = {{0.010, 0.091, 1.0}, {0.010, 0.163, 1.0}};
    std::vector<double> s = free_running_slowdowns(jobs, 1.0);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_NEAR(s[0], w1 * w2, 1e-12);
    EXPECT_NEAR(s[1], w1 * w2, 1e-12);
}

TEST(FreeRunning, JobsWhoseCapsFitSideBySideNeverWait) {
    std::vector<FreeRunner> jobs = {{0.02, 0.08, 0.5}, {0.03, 0.05, 0.3}, {0.01, 0.2, 0.2}};
    for (double x : free_running_slowdowns(jobs, 1.0)) EXPECT_EQ(x, 0.0);
    // With a gated job's average load taken off, the same caps no longer fit.
    for (double x : free_running_slowdowns(jobs, 0.8)) EXPECT_GT(x, 0.0);
}

TEST(FreeRunning, MoreJobsOnTheLinkWaitLonger) {
    std::vector<FreeRunner> jobs = {{0.02, 0.08, 1.0}, {0.02, 0.08, 1.0}};
    double before = free_running_slowdowns(jobs, 1.0)[0];
    jobs.push_back({0.04, 0.06, 0.8});
    double after = free_running_slowdowns(jobs, 1.0)[0];
    EXPECT_GT(before, 0.0);
    EXPECT_GT(after, before);
    // A heavier third job delays the first more than a lighter one.
    jobs.back().work_s = 0.01;
    EXPECT_LT(free_running_slowdowns(jobs, 1.0)[0], after);
}

TEST(FreeRunning, ExactAndTypicalCapPathsAgreeOnEqualCaps) {
    // Eight jobs take the exact sum over sets; a ninth that never loads the
    // link sends the same jobs down the typical-cap path, which is exact
    // when all caps are equal.
    std::vector<FreeRunner> jobs;
    for (int i = 0; i < 8; ++i) jobs.push_back({0.005 + 0.002 * i, 0.05 + 0.01 * i, 0.6});
    ASSERT_EQ(jobs.size(), harmonics::kExactRunners);
    std::vector<double> exact = free_running_slowdowns(jobs, 1.0);
    jobs.push_back({0.0, 0.1, 0.6});
    std::vector<double> typical = free_running_slowdowns(jobs, 1.0);
    ASSERT_EQ(typical.size(), 9u);
    for (size_t i = 0; i < exact.size(); ++i) {
        EXPECT_GT(exact[i], 0.0);
        EXPECT_NEAR(typical[i], exact[i], 1e-9 * (1 + exact[i])) << "job " << i;
    }
    EXPECT_NEAR(typical[8], 0.0, 1e-12);
}
