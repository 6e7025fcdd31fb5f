// The job's schedule as pushed by harmonics-schedd: the first collective of
// iteration k may start no earlier than origin + shift + k*period (absolute
// host time). Written by the reporting thread, read by NCCL's user threads
// without locks (seqlock).
#ifndef HARMONICS_NCCL_SCHEDULE_H
#define HARMONICS_NCCL_SCHEDULE_H

#include <atomic>
#include <cstdint>

namespace hnccl {

struct Schedule {
  bool valid = false;
  uint64_t origin_ns = 0;
  uint64_t shift_ns = 0;
  uint64_t period_ns = 0;
  uint64_t version = 0;   // schedd's schedule version, for the trace and logs
};

// Release time for a collective enqueued at `now`: the next slot at or after
// now, except that a collective arriving at most `tolerance` after a slot goes
// at once (returns now). Never more than `cap` after now.
uint64_t next_release(const Schedule& s, uint64_t now, uint64_t tolerance, uint64_t cap);

class ScheduleCell {
 public:
  void store(const Schedule& s);
  Schedule load() const;
  void invalidate();

 private:
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> origin_{0}, shift_{0}, period_{0}, version_{0};
  std::atomic<bool> valid_{false};
};

}  // namespace hnccl

#endif
