// The job's rhythm learnt from completed collectives: collectives close in
// time form a burst (a communication phase); bursts repeat with the training
// iteration. The estimator finds how many bursts make one iteration and the
// period, using medians so that jitter and the odd outlier (a checkpoint, an
// evaluation step) do not move the estimate. Pure computation, no I/O.
#ifndef HARMONICS_NCCL_RHYTHM_H
#define HARMONICS_NCCL_RHYTHM_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace hnccl {

struct CollSample {
  uint64_t start_ns = 0;  // GPU start in host time (enqueue time if unknown)
  uint64_t end_ns = 0;
  uint64_t bytes = 0;
  uint64_t held_ns = 0;   // how long the gate held it before it could start
  // The user thread's side, in host time: when it called the collective and
  // when it went on (later only if the host gate held the call). The gate
  // judges a call by the pause since the previous call went on; on a GPU the
  // host enqueues ahead of the kernels, so that pause is not the GPU's idle
  // time. 0: unknown, the host taken to call when the GPU starts (less the
  // hold) and to go on at the GPU start.
  uint64_t call_ns = 0;
  uint64_t resumed_ns = 0;
};

struct Phase {
  uint64_t offset_ns = 0;    // from the iteration's first burst start
  uint64_t duration_ns = 0;
  uint64_t bytes = 0;
  uint64_t pause_ns = 0;     // median pause the gate sees before the phase's
                             // first call: since the previous call went on
  uint64_t held_ns = 0;      // median time the gate held the phase's start:
                             // part of the period, not of the job's own rhythm
};

struct Rhythm {
  bool valid = false;
  uint64_t period_ns = 0;
  uint64_t jitter_ns = 0;           // median absolute deviation of the period
  int bursts_per_iteration = 0;
  uint64_t iteration_start_ns = 0;  // start of the latest complete iteration
  uint64_t iterations = 0;          // iterations seen in the window
  std::vector<Phase> phases;
};

class RhythmEstimator {
 public:
  explicit RhythmEstimator(uint64_t burst_gap_ns, size_t window = 96);
  void add(const CollSample& c);
  // Close the open burst when nothing arrived for a burst gap.
  void flush(uint64_t now_ns);
  Rhythm estimate() const;
  size_t bursts() const { return bursts_.size(); }

 private:
  struct Burst {
    uint64_t start = 0, end = 0, bytes = 0, held = 0;
    uint64_t first_call = 0, last_resumed = 0;  // host side, as the gate sees it
  };
  void close_open();
  bool try_pattern(int m, Rhythm* out) const;

  uint64_t gap_ns_;
  size_t window_;
  std::deque<Burst> bursts_;
  Burst open_;
  bool has_open_ = false;
};

// With several phases per iteration only the one after the longest pause
// (the forward pass) opens an iteration: the gate holds a burst only when
// the pause before it is at least this long, halfway between that pause and
// the next longest. 0 (every burst opens one) with one phase or no valid
// rhythm; kNoOpening (no burst is held) with several phases of which none
// clearly stands out (1.5 times the next longest pause): holding every burst
// would make each phase wait for the iteration's slot.
constexpr uint64_t kNoOpening = UINT64_MAX;
uint64_t opening_pause_ns(const Rhythm& r);
// The threshold the gate goes on with after a new estimate: the estimate's,
// or while there is none (a window straddling an evaluation step, a change
// of rhythm) the one before. Reset to 0 then, a job of several phases had
// every burst held and each later phase waited for the iteration's slot.
uint64_t next_opening_pause_ns(uint64_t previous, const Rhythm& r);

// Median of v (v is reordered); 0 for an empty vector.
uint64_t median_of(std::vector<uint64_t>& v);

}  // namespace hnccl

#endif
