// The NCCL plugin's building blocks: handles and pools, the schedule rule,
// the clock offset estimate, the completion queue and the trace format.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>
#include <vector>

#include "plugins/nccl/clock_offset.cpp"
#include "plugins/nccl/records.cpp"
#include "plugins/nccl/schedule.cpp"
#include "policy/release.cpp"
#include "plugins/nccl/trace.cpp"
#include "plugins/nccl/mpsc_queue.h"

using namespace hnccl;

namespace {
constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kSec = 1000000000ull;
}  // namespace

TEST(NcclHandles, RoundTripAndRejectGarbage) {
  const Handle h = decode(encode(Kind::KernelCh, 4095, 0xfffffffeu));
  EXPECT_EQ(h.kind, Kind::KernelCh);
  EXPECT_EQ(h.slot, 4095u);
  EXPECT_EQ(h.gen, 0xfffffffeu);
  EXPECT_EQ(decode(nullptr).kind, Kind::None);
  EXPECT_EQ(decode(reinterpret_cast<void*>(0x7f)).kind, Kind::None);
  EXPECT_NE(encode(Kind::Coll, 0, 0), nullptr);  // never NULL: NULL means "ignored"
}

TEST(NcclRecords, StaleParentIsNotRead) {
  ApiRing ring(4);
  ApiInfo in;
  in.enqueue_ns = 42;
  void* first = ring.publish(in);
  ApiInfo out;
  ASSERT_TRUE(ring.read(first, &out));
  EXPECT_EQ(out.enqueue_ns, 42u);
  for (int i = 0; i < 4; ++i) ring.publish(in);  // the ring wraps over the first slot
  EXPECT_FALSE(ring.read(first, &out));
  EXPECT_FALSE(ring.read(encode(Kind::Coll, 0, 1), &out));
}

TEST(NcclRecords, CollCompletesOnLastStopOnly) {
  CollPool pool(2);
  uint32_t slot, gen;
  ASSERT_NE(pool.claim(&slot, &gen, 3), nullptr);  // Coll stop + 2 channels
  EXPECT_FALSE(pool.count_stop(slot, gen));
  EXPECT_FALSE(pool.count_stop(slot, gen + 1));  // stale generation: ignored
  EXPECT_FALSE(pool.count_stop(slot, gen));
  EXPECT_TRUE(pool.count_stop(slot, gen));
  EXPECT_FALSE(pool.count_stop(slot, gen));  // already complete
  EXPECT_EQ(pool.live(slot, gen), nullptr);
  pool.release(slot);
  uint32_t s2, g2;
  ASSERT_NE(pool.claim(&s2, &g2, 1), nullptr);
  ASSERT_NE(pool.claim(&s2, &g2, 1), nullptr);
  EXPECT_EQ(pool.claim(&s2, &g2, 1), nullptr);  // full: the caller drops and counts
}

TEST(NcclRecords, ForceCompleteRacesWithStop) {
  CollPool pool(1);
  uint32_t slot, gen;
  ASSERT_NE(pool.claim(&slot, &gen, 2), nullptr);
  EXPECT_TRUE(pool.force_complete(slot, gen));
  EXPECT_FALSE(pool.count_stop(slot, gen));
  EXPECT_FALSE(pool.force_complete(slot, gen));
}

TEST(NcclRecords, DatatypeSizesAndFuncs) {
  EXPECT_EQ(datatype_size("ncclFloat32"), 4u);
  EXPECT_EQ(datatype_size("ncclBfloat16"), 2u);
  EXPECT_EQ(datatype_size("ncclFloat64"), 8u);
  EXPECT_EQ(datatype_size("ncclInt8"), 1u);
  EXPECT_EQ(datatype_size("ncclUint64"), 8u);
  EXPECT_EQ(datatype_size("bogus"), 1u);
  EXPECT_EQ(datatype_size(nullptr), 1u);
  EXPECT_EQ(func_from_name("ReduceScatter"), kReduceScatter);
  EXPECT_STREQ(func_name(func_from_name("AllToAll")), "Other");
}

// Slots at 100 s + 7 ms + k * 50 ms.
Schedule gated_50ms() {
  Schedule s;
  s.valid = true;
  s.origin_ns = 100 * kSec;
  s.shift_ns = 7 * kMs;
  s.period_ns = 50 * kMs;
  return s;
}

TEST(NcclSchedule, ReleaseAtNextSlotWithinToleranceAndCap) {
  Schedule s = gated_50ms();
  const uint64_t slot = s.origin_ns + s.shift_ns + 10 * s.period_ns;
  EXPECT_EQ(next_release(s, slot - 20 * kMs, 50000, 50 * kMs), slot);
  EXPECT_EQ(next_release(s, slot + 30000, 50000, 50 * kMs), slot + 30000);   // just late: go
  // Late by up to 20% of the period (policy/release.h): go at once, as the
  // simulator does; later than that: wait for the next slot.
  EXPECT_EQ(next_release(s, slot + 60000, 50000, 50 * kMs), slot + 60000);
  EXPECT_EQ(next_release(s, slot + 10 * kMs, 50000, 50 * kMs), slot + 10 * kMs);
  EXPECT_EQ(next_release(s, slot + 11 * kMs, 50000, 50 * kMs), slot + s.period_ns);  // missed it
  EXPECT_EQ(next_release(s, slot - 20 * kMs, 50000, 5 * kMs), slot - 15 * kMs);  // capped
  EXPECT_EQ(next_release(s, s.origin_ns - kSec, 0, 50 * kMs), s.origin_ns - kSec + 50 * kMs);
  s.valid = false;
  EXPECT_EQ(next_release(s, slot - 20 * kMs, 0, 50 * kMs), slot - 20 * kMs);
}

TEST(NcclSchedule, LateBeyondTheGapGoesOnlyWhileCatchingUp) {
  // The schedule says 4 ms of free link behind the job's burst; the share of
  // the period a catching-up job may be late is 10 ms (20% of 50 ms).
  Schedule s = gated_50ms();
  s.late_ns = 4 * kMs;
  EXPECT_EQ(late_allowance_ns(s), 4 * kMs);
  const uint64_t slot = s.origin_ns + s.shift_ns + 10 * s.period_ns;
  uint64_t late = 0;
  // Within the gap: go, remembered as late.
  EXPECT_EQ(next_release(s, slot + 3 * kMs, 50000, 50 * kMs, &late), slot + 3 * kMs);
  EXPECT_EQ(late, 3 * kMs);
  // Beyond the gap and later than last time: not catching up, next slot.
  EXPECT_EQ(next_release(s, slot + s.period_ns + 8 * kMs, 50000, 50 * kMs, &late), slot + 2 * s.period_ns);
  EXPECT_EQ(late, 0u);
  // After a release on its slot, a first slip within the share goes...
  EXPECT_EQ(next_release(s, slot + 3 * s.period_ns + 8 * kMs, 50000, 50 * kMs, &late), slot + 3 * s.period_ns + 8 * kMs);
  EXPECT_EQ(late, 8 * kMs);
  // ...and so does the next iteration while it is less late,
  EXPECT_EQ(next_release(s, slot + 4 * s.period_ns + 6 * kMs, 50000, 50 * kMs, &late), slot + 4 * s.period_ns + 6 * kMs);
  // but not when it slips further.
  EXPECT_EQ(next_release(s, slot + 5 * s.period_ns + 7 * kMs, 50000, 50 * kMs, &late), slot + 6 * s.period_ns);
  // Within the clocks' tolerance is on the slot.
  EXPECT_EQ(next_release(s, slot + 7 * s.period_ns + 30000, 50000, 50 * kMs, &late), slot + 7 * s.period_ns + 30000);
  EXPECT_EQ(late, 0u);
  // A gap wider than the share is capped at the share.
  s.late_ns = 30 * kMs;
  EXPECT_EQ(late_allowance_ns(s), 10 * kMs);
}

// Both gates of the hook (the host gate and the cuda gate kernel run the
// same gate_release.h) release a first collective exactly when the
// simulator's gate does (policy/release.h), memory of the previous release
// included: what harmonics-sim measures is what the hook does. Iterations
// come on their slot, a little late, late past the gap, past the share, or
// periods late, in a seeded random sequence, with and without timing noise;
// every ready time is half a microsecond off the rule's thresholds (and the
// noise a quarter), so rounding never decides.
TEST(NcclSchedule, ASlipGrowingWithinTheJobsNoiseStillCatchesUp) {
  // 4 ms of gap behind the burst, 10 ms share, 3 ms of timing noise.
  Schedule s = gated_50ms();
  s.late_ns = 4 * kMs;
  const uint64_t slot = s.origin_ns + s.shift_ns + 10 * s.period_ns, noise = 3 * kMs;
  uint64_t late = 0;
  EXPECT_EQ(next_release(s, slot + 3 * kMs, 50000, 50 * kMs, &late, noise), slot + 3 * kMs);
  EXPECT_EQ(late, 3 * kMs);
  // 2.5 ms later than last time (past the gap), within the noise: still
  // catching up.
  EXPECT_EQ(next_release(s, slot + s.period_ns + 5500000, 50000, 50 * kMs, &late, noise), slot + s.period_ns + 5500000);
  EXPECT_EQ(late, 5500000u);
  // Without noise the same slip waits for the next slot.
  uint64_t quiet = 3 * kMs;
  EXPECT_EQ(next_release(s, slot + s.period_ns + 5500000, 50000, 50 * kMs, &quiet), slot + 2 * s.period_ns);
  // 3.5 ms later than last time, beyond the noise (within the share): next slot.
  EXPECT_EQ(next_release(s, slot + 2 * s.period_ns + 9 * kMs, 50000, 50 * kMs, &late, noise), slot + 3 * s.period_ns);
  EXPECT_EQ(late, 0u);
  // Never beyond the share: 11 ms late after a 9 ms slip, within the noise, waits.
  late = 9 * kMs;
  EXPECT_EQ(next_release(s, slot + 4 * s.period_ns + 11 * kMs, 50000, 50 * kMs, &late, noise), slot + 5 * s.period_ns);
}

TEST(NcclSchedule, TimingNoiseIsThreeDeviationsOfAValidRhythm) {
  EXPECT_EQ(noise_slip_ns(true, 1000000), 3000000u);
  EXPECT_EQ(noise_slip_ns(false, 1000000), 0u);  // no estimate: no noise
  EXPECT_EQ(noise_slip_ns(true, 0), 0u);
}

TEST(NcclSchedule, HookReleasesWhenTheSimulatorDoes) {
  std::mt19937_64 rng(2026);
  int went_late = 0, early = 0, missed = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Schedule s;
    s.valid = true;
    s.origin_ns = 100 * kSec + (rng() % 1000) * kMs;
    s.shift_ns = (rng() % 50) * kMs;
    s.period_ns = (40 + rng() % 200) * kMs;
    const bool gap = trial % 4 != 0;  // a quarter without a gap from schedd
    s.late_ns = gap ? (rng() % 30) * kMs : Schedule::kNoLate;
    harmonics::JobDecision d;
    d.gated = true;
    d.origin_s = double(s.origin_ns) * 1e-9;
    d.shift_s = double(s.shift_ns) * 1e-9;
    d.period_s = double(s.period_ns) * 1e-9;
    d.late_s = gap ? double(s.late_ns) * 1e-9 : -1;
    // A quarter with no timing noise measured, the others up to 5 ms.
    const uint64_t noise = trial % 4 != 1 ? (rng() % 5000) * 1000 + 250 : 0;
    harmonics::ReleaseMemory sim_memory;
    sim_memory.noise_s = double(noise) * 1e-9;
    uint64_t hook_memory = 0;
    const uint64_t first = s.origin_ns + s.shift_ns;
    for (int k = 0; k < 200; ++k) {
      const uint64_t slot = first + uint64_t(k) * s.period_ns;
      // Ready within [-30 %, +40 %) of a period around slot k, or periods late.
      const int64_t span = int64_t(s.period_ns / 1000);
      int64_t off_us = int64_t(rng() % uint64_t(span * 7 / 10)) - span * 3 / 10;
      if (rng() % 10 == 0) off_us += span * int64_t(1 + rng() % 3);
      const uint64_t ready = uint64_t(int64_t(slot) + off_us * 1000 + 500);
      const uint64_t hook = next_release(s, ready, 0, s.period_ns, &hook_memory, noise);
      const double sim = harmonics::next_release_s(d, double(ready) * 1e-9, sim_memory);
      ASSERT_NEAR(double(hook) * 1e-9, sim, 1e-9) << "trial " << trial << " iteration " << k << ": ready "
                                                   << ready << ", period " << s.period_ns;
      ASSERT_NEAR(double(hook_memory) * 1e-9, sim_memory.late_s, 1e-9) << "trial " << trial << " iteration " << k;
      went_late += hook == ready;
      early += hook > ready && ready < slot;
      missed += hook > ready && ready > slot;
    }
  }
  // The sequence tried every branch of the rule.
  EXPECT_GT(went_late, 500);
  EXPECT_GT(early, 500);
  EXPECT_GT(missed, 500);
}

TEST(NcclSchedule, CellKeepsWholeSchedules) {
  ScheduleCell cell;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t i = 1; !stop.load(); ++i) {
      Schedule s;
      s.valid = true;
      s.origin_ns = i;
      s.shift_ns = 2 * i;
      s.period_ns = 3 * i;
      cell.store(s);
    }
  });
  for (int i = 0; i < 100000; ++i) {
    const Schedule s = cell.load();
    if (s.valid) {
      ASSERT_EQ(s.shift_ns, 2 * s.origin_ns);
      ASSERT_EQ(s.period_ns, 3 * s.origin_ns);
    }
  }
  stop = true;
  writer.join();
}

TEST(NcclClockOffset, MinimumOverWindowAndDrift) {
  ClockOffset c;
  int64_t off = 0;
  EXPECT_FALSE(c.estimate(1000 * kSec, &off));
  const uint64_t t = 1000 * kSec;
  const int64_t truth = 3500 * int64_t(kMs);
  for (uint64_t i = 0; i < 100; ++i) {
    const uint64_t host = t + i * kMs;
    const uint64_t delay = 2000 + (i * 7919) % 50000;  // callbacks come late
    c.sample(host, host - uint64_t(truth) - delay);
  }
  ASSERT_TRUE(c.estimate(t + 100 * kMs, &off));
  EXPECT_GE(off, truth);
  EXPECT_LE(off, truth + 2100);
  EXPECT_EQ(c.to_host(t - uint64_t(truth), t + 100 * kMs), t + uint64_t(off - truth));
  // The clocks drift by 1 ms; after the window has slid past the old samples,
  // the estimate follows.
  const uint64_t later = t + 20 * kSec;
  for (uint64_t i = 0; i < 10; ++i) c.sample(later + i * kMs, later + i * kMs - uint64_t(truth + int64_t(kMs)));
  ASSERT_TRUE(c.estimate(later + 10 * kMs, &off));
  EXPECT_EQ(off, truth + int64_t(kMs));
}

TEST(NcclQueue, ManyProducersOneConsumerNothingLostOrDuplicated) {
  MpscQueue<uint64_t> q(1024);
  std::atomic<uint64_t> dropped{0};
  std::vector<std::thread> producers;
  for (uint64_t p = 0; p < 4; ++p)
    producers.emplace_back([&, p] {
      for (uint64_t i = 0; i < 20000; ++i)
        if (!q.push(p * 1000000 + i)) dropped.fetch_add(1);
    });
  std::set<uint64_t> seen;
  uint64_t v;
  auto drain = [&] {
    while (q.pop(&v)) EXPECT_TRUE(seen.insert(v).second);
  };
  for (int i = 0; i < 1000; ++i) drain();
  for (auto& t : producers) t.join();
  drain();
  EXPECT_EQ(seen.size() + dropped.load(), 80000u);
  MpscQueue<int> small(2);
  EXPECT_TRUE(small.push(1));
  EXPECT_TRUE(small.push(2));
  EXPECT_FALSE(small.push(3));  // full: fails at once
}

TEST(NcclTrace, OneJsonObjectPerLine) {
  Completed c;
  c.comm_id = 0xabcdef0123456789ull;
  c.rank = 3;
  c.seq = 17;
  c.func = kAllReduce;
  c.bytes = 4194304;
  c.edge_bytes = 7340032;
  c.enqueue_ns = 1700000000000000000ull;
  c.gpu_start_ns = 1700000000000100000ull;
  c.gpu_end_ns = 1700000000000900000ull;
  c.gated_ns = 1234;
  char buf[512];
  const size_t n = format_trace_line(c, "4242", buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n),
            "{\"job\":4242,\"rank\":3,\"comm\":\"0xabcdef0123456789\",\"seq\":17,\"func\":\"AllReduce\","
            "\"bytes\":4194304,\"edge_bytes\":7340032,\"enqueue_ns\":1700000000000000000,\"gpu_start_ns\":1700000000000100000,"
            "\"gpu_end_ns\":1700000000000900000,\"gated_ns\":1234}\n");
  format_trace_line(c, "", buf, sizeof buf);
  EXPECT_EQ(std::string(buf).rfind("{\"job\":null,", 0), 0u);
  format_trace_line(c, "12_\"x", buf, sizeof buf);
  EXPECT_EQ(std::string(buf).rfind("{\"job\":\"12_x\",", 0), 0u);
}
