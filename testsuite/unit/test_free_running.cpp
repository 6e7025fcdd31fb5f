// The queueing estimate of jobs running free on one link (free_running.h).
#include <gtest/gtest.h>

#include "policy/free_running.h"

#include <cmath>

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

namespace {

// The law written out over all 2^n sets, in seconds and without scaling:
// jobs of equal cap c on a link of capacity C, Phi(k) = Phi(k-1) max(k/C, 1/c),
// job i completing an iteration every o_i / P(i off the link).
std::vector<double> by_enumeration(const std::vector<FreeRunner>& jobs, double C) {
    const size_t n = jobs.size();
    const double c = jobs[0].cap;
    std::vector<long double> phi(n + 1, 1);
    for (size_t k = 1; k <= n; ++k) phi[k] = phi[k - 1] * std::max(k / C, 1 / c);
    long double Z = 0;
    std::vector<long double> off(n, 0);
    for (size_t A = 0; A < (size_t{1} << n); ++A) {
        long double p = phi[__builtin_popcountll(A)];
        for (size_t i = 0; i < n; ++i) p *= (A >> i & 1) ? jobs[i].work_s : jobs[i].off_s;
        Z += p;
        for (size_t i = 0; i < n; ++i)
            if (!(A >> i & 1)) off[i] += p;
    }
    std::vector<double> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(static_cast<double>(jobs[i].off_s * Z / off[i] / (jobs[i].off_s + jobs[i].work_s / c) - 1));
    return out;
}

}  // namespace

TEST(FreeRunning, TypicalCapPathMatchesTheLawOverAllSets) {
    // Twelve jobs, equal caps, some mostly on the link (off < work), some
    // mostly off it: both directions of the typical-cap path's division.
    std::vector<FreeRunner> jobs;
    for (int i = 0; i < 12; ++i) jobs.push_back({0.004 + 0.006 * (i % 5), 0.002 + 0.009 * (i % 7), 0.7});
    ASSERT_GT(jobs.size(), harmonics::kExactRunners);
    const std::vector<double> want = by_enumeration(jobs, 0.9);
    const std::vector<double> got = free_running_slowdowns(jobs, 0.9);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_GT(want[i], 0.0);
        EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + want[i])) << "job " << i;
    }
}

TEST(FreeRunning, HundredsOfJobsStayFiniteAndEqualJobsWaitAlike) {
    std::vector<FreeRunner> jobs;
    for (int i = 0; i < 400; ++i) jobs.push_back({0.001 * (1 + i % 2), 0.2, 0.5});
    const std::vector<double> s = free_running_slowdowns(jobs, 1.0);
    ASSERT_EQ(s.size(), 400u);
    for (double x : s) {
        EXPECT_TRUE(std::isfinite(x));
        EXPECT_GT(x, 0.0);
    }
    EXPECT_NEAR(s[0], s[398], 1e-9 * (1 + s[0]));
    EXPECT_NEAR(s[1], s[399], 1e-9 * (1 + s[1]));
}
