// Where a job that never holds its collectives comes to rest among gated
// ones: the slot grid's delay as a profile over the job's shift
// (slot_delays.h) and the stable points of its drift (lock_points.h).
#include <gtest/gtest.h>

#include <random>

#include "policy/lock_points.h"
#include "policy/slot_delays.h"

using namespace harmonics;

namespace {

SlotJob burst_job(JobId id, int period, int link, int first, int len, double level) {
    SlotJob j;
    j.id = id;
    j.period_slots = period;
    j.isolated_period_s = period * 0.001;
    SlotDemand d;
    d.link = link;
    d.pattern.assign(period, 0);
    for (int t = first; t < first + len; ++t) d.pattern[t % period] = level;
    j.demand.push_back(d);
    j.shifts = {0};
    return j;
}

}  // namespace

TEST(SlotDelays, ProfileIsEveryShiftsCollisionDelay) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    for (int trial = 0; trial < 40; ++trial) {
        SlotProblem p;
        p.slot_s = 0.001;
        p.hyperperiod_slots = 60;
        p.cyclic = true;
        p.links = {SlotLink(0, 1e9, trial % 3 == 0 ? 0.2 : 0), SlotLink(1, 1e9)};
        if (trial % 4 == 1) p.links[1].background_mix = {{0, 0.5}, {0.3, 0.3}, {0.6, 0.2}};
        const int periods[] = {20, 30, 60};
        const int n = 3 + trial % 3;
        for (int i = 0; i < n; ++i) {
            const int P = periods[rng() % 3];
            SlotJob j = burst_job(i + 1, P, static_cast<int>(rng() % 2), static_cast<int>(rng() % P),
                                  2 + static_cast<int>(rng() % (P / 2)), 0.3 + 0.5 * u(rng));
            // Ragged edges: a burst's first and last slot only partly busy.
            std::vector<double>& pat = j.demand[0].pattern;
            for (int t = 0; t < P; ++t)
                if (pat[t] > 0 && pat[(t + P - 1) % P] == 0) pat[t] *= u(rng);
            if (trial % 2) {   // on both links
                SlotDemand d = j.demand[0];
                d.link = 1 - d.link;
                j.demand.push_back(d);
            }
            p.jobs.push_back(j);
        }
        std::vector<int> shift;
        for (const SlotJob& j : p.jobs) shift.push_back(static_cast<int>(rng() % j.period_slots));
        for (size_t k = 0; k < p.jobs.size(); ++k) {
            const std::vector<double> profile = delay_by_shift(p, shift, k);
            ASSERT_EQ(profile.size(), static_cast<size_t>(p.jobs[k].period_slots));
            std::vector<int> s = shift;
            for (int x = 0; x < p.jobs[k].period_slots; ++x) {
                s[k] = x;
                EXPECT_NEAR(profile[x], collision_delays_s(p, s)[k], 1e-12) << "trial " << trial << " job " << k;
            }
        }
    }
}

TEST(SlotDelays, IterationsAddUpToTheMeanDelay) {
    // On one link the delay of collision_delays_s is the mean of the
    // iterations' delays, cyclic or over a horizon the periods do not divide.
    std::mt19937 rng(5);
    for (int trial = 0; trial < 30; ++trial) {
        SlotProblem p;
        p.slot_s = 0.001;
        p.cyclic = trial % 2 == 0;
        p.hyperperiod_slots = p.cyclic ? 120 : 137;
        p.links = {SlotLink(0, 1e9)};
        const int periods[] = {20, 30, 40, 60};
        for (int i = 0; i < 4; ++i) {
            const int P = periods[rng() % 4];
            p.jobs.push_back(burst_job(i + 1, P, 0, static_cast<int>(rng() % P), 3 + static_cast<int>(rng() % (P / 2)), 0.6));
        }
        std::vector<int> shift;
        for (const SlotJob& j : p.jobs) shift.push_back(static_cast<int>(rng() % j.period_slots));
        const std::vector<double> mean = collision_delays_s(p, shift);
        const std::vector<std::vector<double>> it = iteration_delays_s(p, shift);
        ASSERT_EQ(it.size(), p.jobs.size());
        for (size_t k = 0; k < p.jobs.size(); ++k) {
            const int P = p.jobs[k].period_slots;
            if (p.cyclic) {
                EXPECT_EQ(it[k].size(), static_cast<size_t>(p.hyperperiod_slots / P));
            }
            double sum = 0;
            for (double d : it[k]) sum += d;
            EXPECT_NEAR(sum, mean[k] * p.hyperperiod_slots / P, 1e-12) << "trial " << trial << " job " << k;
        }
    }
}

TEST(LockPoints, RestWhereTheDelayFallsThroughTheLead) {
    // Delay above the lead pushes the job later, below it lets it drift
    // earlier: it rests where the profile falls through the lead, not where it rises.
    EXPECT_EQ(lock_points({0, 0, 1, 3, 5, 3, 1, 0}, 2), std::vector<int>{5});
    EXPECT_EQ(lock_points({3, 0, 0, 0}, 2), std::vector<int>{0});       // across the period's end
    EXPECT_EQ(lock_points({0, 3, 0, 3, 0}, 2), (std::vector<int>{1, 3}));
    EXPECT_TRUE(lock_points({3, 3, 3}, 2).empty());   // always pushed later
    EXPECT_TRUE(lock_points({0, 1, 0}, 2).empty());   // never held back enough
    EXPECT_TRUE(lock_points({0, 3, 0}, 0).empty());   // no lead: it stays wherever it began
}

TEST(LockPoints, AFreeJobLocksJustBehindTheGatedBurst) {
    // Gated G busy in slots 0-29 of 100 at 0.6 of the link; free M (bursts of
    // 20 slots at 0.6) arrives half a slot early every period. Each slot the
    // two overlap costs M a sixth of a slot (0.2 of excess, its half share,
    // at its own rate 0.6), so it rests overlapping G's last 3 slots.
    SlotProblem p;
    p.slot_s = 0.001;
    p.hyperperiod_slots = 100;
    p.cyclic = true;
    p.links = {SlotLink(0, 1e9)};
    p.jobs = {burst_job(1, 100, 0, 0, 30, 0.6), burst_job(2, 100, 0, 0, 20, 0.6)};
    const std::vector<double> profile = delay_by_shift(p, {0, 0}, 1);
    EXPECT_NEAR(profile[27], 3 * 0.001 / 6, 1e-12);
    EXPECT_NEAR(profile[40], 0, 1e-12);
    EXPECT_EQ(lock_points(profile, 0.5 * 0.001), std::vector<int>{27});
    // Twice the lead needs twice the overlap.
    EXPECT_EQ(lock_points(profile, 1.0 * 0.001), std::vector<int>{24});
}
