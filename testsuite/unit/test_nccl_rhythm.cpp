// The rhythm estimator: bursts grouped into iterations, period and phases
// by medians, robust to jitter and the odd outlier.
#include <gtest/gtest.h>

#include <random>

#include "plugins/nccl/rhythm.cpp"

using namespace hnccl;

namespace {
constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kUs = 1000ull;

// Feeds `iters` iterations; each iteration is a list of bursts
// {offset, duration, collectives, bytes per collective}.
struct BurstSpec {
  uint64_t offset, duration;
  int colls;
  uint64_t bytes;
};

void feed(RhythmEstimator& e, uint64_t period, const std::vector<BurstSpec>& bursts, int iters,
          uint64_t jitter, uint64_t* t_end, uint32_t seed = 1) {
  std::mt19937_64 rng(seed);
  uint64_t t = 1000 * 1000 * kMs;
  for (int i = 0; i < iters; ++i) {
    const uint64_t j = jitter ? rng() % jitter : 0;
    for (const BurstSpec& b : bursts) {
      const uint64_t each = b.duration / uint64_t(b.colls);
      for (int k = 0; k < b.colls; ++k) {
        CollSample c;
        c.start_ns = t + j + b.offset + uint64_t(k) * each;
        c.end_ns = c.start_ns + each - 20 * kUs;
        c.bytes = b.bytes;
        e.add(c);
      }
    }
    t += period;
  }
  *t_end = t;
}

// A collective with the user thread's side: called at `call`, on again at
// `resumed` (after a host gate's hold), its GPU start held `held`.
CollSample called(uint64_t start, uint64_t end, uint64_t bytes, uint64_t call, uint64_t resumed, uint64_t held = 0) {
  CollSample c{start, end, bytes, held};
  c.call_ns = call;
  c.resumed_ns = resumed;
  return c;
}
}  // namespace

TEST(NcclRhythm, OneBurstPerIterationWithJitter) {
  RhythmEstimator e(2 * kMs);
  uint64_t end;
  feed(e, 100 * kMs, {{0, 30 * kMs, 6, 1 << 20}}, 30, 3 * kMs, &end);
  e.flush(end + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.bursts_per_iteration, 1);
  EXPECT_NEAR(double(r.period_ns), 100e6, 2e6);
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_NEAR(double(r.phases[0].duration_ns), 30e6, 1e6);
  EXPECT_EQ(r.phases[0].bytes, 6u << 20);
  EXPECT_GE(r.iterations, 25u);
}

TEST(NcclRhythm, TwoPhasesPerIterationFoundFromTheLongestPause) {
  // Bucketed all-reduce overlapping the backward pass (at 40 ms) and an
  // all-gather at 80 ms; the forward pass is the longest pause.
  RhythmEstimator e(2 * kMs);
  uint64_t end;
  feed(e, 120 * kMs, {{40 * kMs, 10 * kMs, 4, 1 << 22}, {80 * kMs, 5 * kMs, 2, 1 << 18}}, 20, 0, &end);
  e.flush(end);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.bursts_per_iteration, 2);
  EXPECT_NEAR(double(r.period_ns), 120e6, 1e5);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].offset_ns, 0u);
  EXPECT_NEAR(double(r.phases[1].offset_ns), 40e6, 1e5);
  EXPECT_EQ(r.phases[0].bytes, 4u << 22);  // the burst after the forward pass leads
  // Pauses since the previous burst's last call (no host times: each call at
  // its GPU start): 40 ms + (120 - 82.5) ms, and 80 - 47.5 ms.
  EXPECT_NEAR(double(r.phases[0].pause_ns), 77.5e6, 1e5);
  EXPECT_NEAR(double(r.phases[1].pause_ns), 32.5e6, 1e5);
}

TEST(NcclRhythm, AnOutlierIterationDoesNotMoveThePeriod) {
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * 1000 * kMs;
  for (int i = 0; i < 40; ++i) {
    const uint64_t period = (i == 20) ? 400 * kMs : 50 * kMs;  // a checkpoint
    CollSample c{t, t + 5 * kMs, 1 << 20};
    e.add(c);
    t += period;
  }
  e.flush(t);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.period_ns, 50 * kMs);
}

TEST(NcclRhythm, ChangeOfRhythmIsNotTakenForTwoPhases) {
  // 20 ms iterations, then the gate stretches them to 50 ms: while the window
  // holds both, no estimate may claim two identical phases per iteration.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * 1000 * kMs;
  for (int i = 0; i < 40; ++i) {
    const uint64_t period = i < 8 ? 20 * kMs : 50 * kMs;
    e.add(CollSample{t, t + 2 * kMs, 1 << 21});
    t += period;
    e.flush(t);
    const Rhythm r = e.estimate();
    if (r.valid) {
      EXPECT_EQ(r.bursts_per_iteration, 1) << "after burst " << i;
    }
  }
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.period_ns, 50 * kMs);
}

TEST(NcclRhythm, ComputeJitteringInACycleIsNotTakenForSeveralPhases) {
  // One all-reduce per iteration after 7, 8, 9, 10, 11 ms of compute, over
  // and over (the nccl harness's jitter). Too jittery for a period of one
  // burst; every five bursts repeat exactly, but five bursts of one size of
  // which none follows a clearly longer pause are one phase, not five (the
  // gate could not tell which opens the iteration, and schedd would plan a
  // five times longer period).
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 60; ++i) {
    t += (7 + uint64_t(i % 5)) * kMs;
    e.add(CollSample{t, t + 2 * kMs, 1 << 20});
    t += 2 * kMs;
    e.flush(t);
    const Rhythm r = e.estimate();
    if (r.valid) {
      EXPECT_EQ(r.bursts_per_iteration, 1) << "after burst " << i;
    }
  }
}

TEST(NcclRhythm, NoPatternNoEstimate) {
  RhythmEstimator e(2 * kMs);
  std::mt19937_64 rng(7);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 60; ++i) {
    t += 5 * kMs + rng() % (200 * kMs);
    e.add(CollSample{t, t + kMs, 1 + rng() % (1 << 20)});
  }
  e.flush(t + kMs * 10);
  EXPECT_FALSE(e.estimate().valid);
  RhythmEstimator few(2 * kMs);
  few.add(CollSample{kMs, 2 * kMs, 1});
  few.add(CollSample{100 * kMs, 101 * kMs, 1});
  few.flush(200 * kMs);
  EXPECT_FALSE(few.estimate().valid);  // two bursts are not a rhythm yet
}

TEST(NcclRhythm, GateHoldOfEachBurstIsReportedPerPhase) {
  // Gated on a 100 ms period: every iteration's first collective was held
  // 12 ms (odd ones 14 ms), the others not at all.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 20; ++i) {
    for (int k = 0; k < 3; ++k) {
      CollSample c{t + uint64_t(k) * 5 * kMs, t + uint64_t(k) * 5 * kMs + 4 * kMs, 1 << 20};
      c.held_ns = k == 0 ? (i % 2 ? 14 : 12) * kMs : 0;
      e.add(c);
    }
    t += 100 * kMs;
  }
  e.flush(t + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  ASSERT_EQ(r.phases.size(), 1u);
  EXPECT_GE(r.phases[0].held_ns, 12 * kMs);
  EXPECT_LE(r.phases[0].held_ns, 14 * kMs);
}

TEST(NcclRhythm, FollowsAChangeOfPeriodWithinAFewIterations) {
  // Running free under contention (230 ms), then gated alone (177 ms): the
  // schedd must hear the new rhythm a few iterations later, not after the
  // old one has left a long window.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 40; ++i, t += 230 * kMs) e.add(CollSample{t, t + 90 * kMs, 1 << 20});
  for (int i = 0; i < 10; ++i, t += 177 * kMs) e.add(CollSample{t, t + 54 * kMs, 1 << 20});
  e.flush(t + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_NEAR(double(r.period_ns), 177e6, 1e6);
  EXPECT_NEAR(double(r.phases[0].duration_ns), 54e6, 1e6);
}

TEST(NcclRhythm, MissedSlotsDoNotChangeTheOwnRhythm) {
  // Gated on 100 ms slots, the job needs 96 ms: usually held 4 ms, but every
  // other iteration it is late and held for the slot after (104 ms). The raw
  // burst-to-burst period alternates 100 / 200 ms; its own rhythm is 96 ms.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 30; ++i) {
    const bool missed = i % 2 == 1;  // this burst came a slot late
    t += missed ? 200 * kMs : 100 * kMs;
    CollSample c{t, t + 30 * kMs, 1 << 20};
    c.held_ns = (missed ? 104 : 4) * kMs;  // ready 96 ms after the last burst
    e.add(c);
  }
  e.flush(t + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  EXPECT_EQ(r.bursts_per_iteration, 1);
  ASSERT_EQ(r.phases.size(), 1u);
  // period - held is the job's own 96 ms.
  EXPECT_NEAR(double(r.period_ns) - double(r.phases[0].held_ns), 96e6, 1e6);
}

TEST(NcclRhythm, JobsSlidingThroughEachOtherStillHaveARhythm) {
  // Three identical jobs running free on one uplink slide through each
  // other: each iteration's all-reduce takes 54 to 163 ms as the overlap
  // changes, so the period swings from 176 to 285 ms, while the job's own
  // compute stays 122 ms. The schedd must hear of the job (it is the one
  // that needs scheduling most), with that compute.
  const uint64_t comm[] = {159, 156, 150, 137, 110, 57, 54, 93, 128, 146, 154, 159, 161, 163};
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int rep = 0; rep < 2; ++rep)
    for (uint64_t c : comm) {
      e.add(CollSample{t, t + c * kMs, 1 << 20});
      t += (c + 122) * kMs;
      e.flush(t);
      const Rhythm r = e.estimate();
      if (e.bursts() >= 4) {
        ASSERT_TRUE(r.valid) << "after " << e.bursts() << " bursts";
        ASSERT_EQ(r.phases.size(), 1u);
        EXPECT_NEAR(double(r.period_ns) - double(r.phases[0].duration_ns), 122e6, 1e6);
      }
    }
}

TEST(NcclRhythm, AGatedForwardPassIsStillTheIterationsOpening) {
  // Two phases per iteration: the forward pass (30 ms of idle link), then a
  // 10 ms all-reduce, 5 ms of backward compute and a 5 ms all-gather, called
  // by a host that waits for each collective (the emulated trainer). The
  // host gate holds the forward pass's call 35 to 45 ms for its slot. The
  // gate sees the 35 ms pause since the all-gather's call, never the hold:
  // the pause the phases report, and the opening threshold made from them,
  // must be that one, or the threshold (with the hold in, 42.5 ms) would
  // pass over the burst it gates.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 20; ++i) {
    const uint64_t held = (35 + uint64_t(i % 3) * 5) * kMs;
    t += 30 * kMs;  // forward pass
    e.add(called(t + held, t + held + 10 * kMs, 1 << 22, t, t + held, held));
    t += held + 15 * kMs;
    e.add(called(t, t + 5 * kMs, 1 << 18, t, t));
    t += 5 * kMs;
  }
  e.flush(t + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].bytes, 1u << 22);
  EXPECT_NEAR(double(r.phases[0].pause_ns), 35e6, 1e5);
  EXPECT_NEAR(double(r.phases[1].pause_ns), 15e6, 1e5);
  const uint64_t opening = opening_pause_ns(r);
  EXPECT_GT(opening, 15 * kMs);   // the all-gather is not an iteration's opening
  EXPECT_LE(opening, 35 * kMs);   // the forward pass is, held or not
}

TEST(NcclRhythm, TheOpeningIsJudgedOnTheHostsPausesNotTheGpus) {
  // FSDP-like: a forward all-gather (A) and a backward reduce-scatter (B).
  // On the GPU, A follows 60 ms of idle link and B 20 ms. The host calls
  // ahead of the kernels: A 10 ms into the iteration, then it waits for the
  // forward pass's loss and calls B at 80 ms, 10 ms before the GPU gets to
  // it. The gate sees 30 ms before A's call and 70 ms before B's: it can
  // only tell B, so B must open the iteration (phase 0, whose start the
  // schedule places), and the threshold must lie between the two host
  // pauses. Judged on the GPU's pauses, A led and the threshold (40 ms) made
  // the gate hold B at A's slot.
  RhythmEstimator e(2 * kMs);
  uint64_t t = 1000 * kMs;
  for (int i = 0; i < 20; ++i) {
    e.add(called(t + 60 * kMs, t + 70 * kMs, 1 << 22, t + 10 * kMs, t + 10 * kMs));
    e.add(called(t + 90 * kMs, t + 100 * kMs, 1 << 18, t + 80 * kMs, t + 80 * kMs));
    t += 100 * kMs;
  }
  e.flush(t + 10 * kMs);
  const Rhythm r = e.estimate();
  ASSERT_TRUE(r.valid);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].bytes, 1u << 18);  // B leads
  EXPECT_NEAR(double(r.phases[0].pause_ns), 70e6, 1e5);
  EXPECT_NEAR(double(r.phases[1].pause_ns), 30e6, 1e5);
  EXPECT_NEAR(double(r.phases[1].offset_ns), 70e6, 1e5);  // A's GPU start, 70 ms after B's
  EXPECT_NEAR(double(r.period_ns), 100e6, 1e5);
  const uint64_t opening = opening_pause_ns(r);
  EXPECT_GT(opening, 30 * kMs);  // A's call is not held
  EXPECT_LE(opening, 70 * kMs);  // B's is
}

TEST(NcclRhythm, OnlyAForwardPassThatStandsOutOpensAnIteration) {
  Rhythm r;
  r.valid = true;
  r.phases = {Phase{0, kMs, 1, 20 * kMs, 0}};
  EXPECT_EQ(opening_pause_ns(r), 0u);  // one phase: every burst
  r.phases.push_back(Phase{30 * kMs, kMs, 1, 14 * kMs, 0});
  // 20 ms is not 1.5 times 14 ms: no burst held, or each phase would wait
  // for the iteration's slot.
  EXPECT_EQ(opening_pause_ns(r), kNoOpening);
  r.phases[1].pause_ns = 10 * kMs;
  EXPECT_EQ(opening_pause_ns(r), 15 * kMs);  // halfway between 20 and 10 ms
  r.valid = false;
  EXPECT_EQ(opening_pause_ns(r), 0u);
}

TEST(NcclRhythm, TheThresholdOutlivesASpellWithoutEstimate) {
  Rhythm r;
  r.valid = true;
  r.phases = {Phase{0, kMs, 1, 30 * kMs, 0}, Phase{40 * kMs, kMs, 1, 8 * kMs, 0}};
  const uint64_t two = next_opening_pause_ns(0, r);
  EXPECT_EQ(two, 19 * kMs);
  r.valid = false;  // an evaluation step: no estimate for a while
  EXPECT_EQ(next_opening_pause_ns(two, r), two);  // still only the forward pass is held
  r.valid = true;
  r.phases.resize(1);  // the job now has one phase: every burst opens an iteration
  EXPECT_EQ(next_opening_pause_ns(two, r), 0u);
  EXPECT_EQ(next_opening_pause_ns(0, Rhythm{}), 0u);  // nothing learnt yet: every burst
}
