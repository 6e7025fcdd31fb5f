#include "schedule.h"

#include "policy/release.h"

#include <algorithm>

namespace hnccl {

uint64_t late_allowance_ns(const Schedule& s) {
  const uint64_t cap = uint64_t(double(s.period_ns) * harmonics::kDefaultLateTolerance);
  return s.late_ns == Schedule::kNoLate ? cap : std::min(s.late_ns, cap);
}

uint64_t next_release(const Schedule& s, uint64_t now, uint64_t tolerance, uint64_t cap, uint64_t* last_late) {
  if (!s.valid || s.period_ns == 0) return now;
  const uint64_t first = s.origin_ns + s.shift_ns;
  uint64_t late = 0, release = now;
  if (now <= first) {
    release = std::min(first, now + cap);
  } else {
    const uint64_t since = (now - first) % s.period_ns;  // time since the last slot
    // The simulator's release rule (policy/release.h): late by less than the
    // gap behind its bursts, or by a small share of the period while it
    // catches up on a slip, a job goes at once instead of losing a period.
    const uint64_t prev = last_late ? *last_late : 0;
    const bool catching_up = prev == 0 || since < prev;
    const uint64_t share = uint64_t(double(s.period_ns) * harmonics::kDefaultLateTolerance);
    if (since <= std::max(tolerance, late_allowance_ns(s)) || (catching_up && since <= share))
      late = since <= tolerance ? 0 : since;  // within the clocks' error is on the slot
    else
      release = now + std::min(s.period_ns - since, cap);
  }
  if (last_late) *last_late = late;
  return release;
}

void ScheduleCell::store(const Schedule& s) {
  const uint64_t q = seq_.load(std::memory_order_relaxed);
  // Seqlock without fences (ThreadSanitizer understands this form): release
  // stores keep the odd mark ahead of the data; acquire loads in load() keep
  // the second sequence read behind the data.
  seq_.store(q + 1, std::memory_order_relaxed);  // odd: being written
  origin_.store(s.origin_ns, std::memory_order_release);
  shift_.store(s.shift_ns, std::memory_order_release);
  period_.store(s.period_ns, std::memory_order_release);
  version_.store(s.version, std::memory_order_release);
  late_.store(s.late_ns, std::memory_order_release);
  valid_.store(s.valid, std::memory_order_release);
  seq_.store(q + 2, std::memory_order_release);
}

void ScheduleCell::invalidate() {
  Schedule s = load();
  s.valid = false;
  store(s);
}

Schedule ScheduleCell::load() const {
  Schedule s;
  for (int tries = 0; tries < 64; ++tries) {
    const uint64_t q1 = seq_.load(std::memory_order_acquire);
    if (q1 & 1) continue;
    s.origin_ns = origin_.load(std::memory_order_acquire);
    s.shift_ns = shift_.load(std::memory_order_acquire);
    s.period_ns = period_.load(std::memory_order_acquire);
    s.version = version_.load(std::memory_order_acquire);
    s.late_ns = late_.load(std::memory_order_acquire);
    s.valid = valid_.load(std::memory_order_acquire);
    if (seq_.load(std::memory_order_relaxed) == q1) return s;
  }
  return Schedule{};  // writer stuck mid-update: run ungated this once
}

}  // namespace hnccl
