// Offset between the host clock and a GPU's %globaltimer. Each KernelCh
// callback gives one sample host_now - pTimer; the callback runs after the GPU
// event, so every sample is the true offset plus a non-negative delay and the
// minimum over a sliding window is the estimate. The window slides so that the
// drift between the two clocks is followed. Samples come from NCCL's proxy
// thread, reads from anywhere: all lock-free.
#ifndef HARMONICS_NCCL_CLOCK_OFFSET_H
#define HARMONICS_NCCL_CLOCK_OFFSET_H

#include <atomic>
#include <cstdint>

namespace hnccl {

class ClockOffset {
 public:
  static constexpr int kBuckets = 8;
  static constexpr uint64_t kBucketNs = 1000000000ull;  // window: 8 s

  void reset();
  // host_ns: host time at the callback; gpu_ns: the event's pTimer.
  void sample(uint64_t host_ns, uint64_t gpu_ns);
  // Best estimate of host - gpu at host time host_ns; false if no sample yet.
  bool estimate(uint64_t host_ns, int64_t* offset) const;
  // GPU time to host time (identity while no estimate exists).
  uint64_t to_host(uint64_t gpu_ns, uint64_t host_now) const;

 private:
  struct Bucket {
    std::atomic<uint64_t> epoch{0};  // host_ns / kBucketNs + 1; 0 = empty
    std::atomic<int64_t> min{0};
  };
  Bucket buckets_[kBuckets];
};

}  // namespace hnccl

#endif
