#include "schedule.h"

#include "policy/release.h"

#include <algorithm>

namespace hnccl {

uint64_t late_allowance_ns(const Schedule& s) {
  const uint64_t cap = uint64_t(double(s.period_ns) * harmonics::kDefaultLateTolerance);
  return s.late_ns == Schedule::kNoLate ? cap : std::min(s.late_ns, cap);
}

HarmonicsGateRule gate_rule(const Schedule& s, uint64_t tolerance, uint64_t cap, uint64_t noise) {
  HarmonicsGateRule r{};
  if (!s.valid || s.period_ns == 0) return r;  // period 0: not gated
  r.first_slot_ns = s.origin_ns + s.shift_ns;
  r.period_ns = s.period_ns;
  r.tolerance_ns = tolerance;
  r.late_ns = late_allowance_ns(s);
  r.share_ns = uint64_t(double(s.period_ns) * harmonics::kDefaultLateTolerance);
  r.cap_ns = cap;
  r.noise_ns = noise;
  return r;
}

uint64_t noise_slip_ns(bool rhythm_valid, uint64_t jitter_ns) {
  return rhythm_valid ? uint64_t(harmonics::kNoiseSlipMads * double(jitter_ns)) : 0;
}

uint64_t next_release(const Schedule& s, uint64_t now, uint64_t tolerance, uint64_t cap, uint64_t* last_late,
                      uint64_t noise) {
  unsigned long long mem = last_late ? *last_late : 0;
  const uint64_t release = harmonics_gate_release(gate_rule(s, tolerance, cap, noise), now, &mem);
  if (last_late) *last_late = mem;
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
