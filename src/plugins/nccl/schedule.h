// The job's schedule as pushed by harmonics-schedd: the first collective of
// iteration k may start no earlier than origin + shift + k*period (absolute
// host time). Written by the reporting thread, read by NCCL's user threads
// without locks (seqlock).
#ifndef HARMONICS_NCCL_SCHEDULE_H
#define HARMONICS_NCCL_SCHEDULE_H

#include <atomic>
#include <cstdint>

#include "gate_release.h"

namespace hnccl {

struct Schedule {
  bool valid = false;
  uint64_t origin_ns = 0;
  uint64_t shift_ns = 0;
  uint64_t period_ns = 0;
  uint64_t version = 0;   // schedd's schedule version, for the trace and logs
  // How late a collective may be and still go at once (the gap behind the
  // job's bursts in schedd's plan); kNoLate: the default share of the period.
  uint64_t late_ns = kNoLate;
  static constexpr uint64_t kNoLate = ~uint64_t(0);
};

// How late a collective may be for its slot and still go at once.
uint64_t late_allowance_ns(const Schedule& s);

// The release rule's inputs for schedule `s` in host time (a period of 0
// when it gates nothing), as both gates apply it (gate_release.h); `noise`
// is the job's timing noise (noise_slip_ns).
HarmonicsGateRule gate_rule(const Schedule& s, uint64_t tolerance, uint64_t cap, uint64_t noise = 0);

// The job's timing noise for the release rule, from the jitter of its
// compute the rhythm estimate measured (policy/release.h's noise_slip_s);
// 0 without an estimate.
uint64_t noise_slip_ns(bool rhythm_valid, uint64_t jitter_ns);

// Release time for a collective enqueued at `now`: the next slot at or after
// now, except that a collective late for a slot goes at once (returns now)
// when late by at most the schedule's late_ns, or by at most
// policy/release.h's share of the period while it catches up (on its slot or
// less late at the previous release, kept in *last_late: 0 when on a slot);
// within `tolerance` (the clocks' error) it counts as on the slot; a slip
// that grew by less than `noise` since then still catches up. Never more
// than `cap` after now.
uint64_t next_release(const Schedule& s, uint64_t now, uint64_t tolerance, uint64_t cap, uint64_t* last_late = nullptr,
                      uint64_t noise = 0);

class ScheduleCell {
 public:
  void store(const Schedule& s);
  Schedule load() const;
  void invalidate();

 private:
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> origin_{0}, shift_{0}, period_{0}, version_{0}, late_{Schedule::kNoLate};
  std::atomic<bool> valid_{false};
};

}  // namespace hnccl

#endif
