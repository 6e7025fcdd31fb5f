#include "clock_offset.h"

namespace hnccl {

// A bucket being reset by one thread: others skip it for that one sample.
constexpr uint64_t kClaimed = ~0ull;

void ClockOffset::reset() {
  for (auto& b : buckets_) {
    b.epoch.store(0, std::memory_order_relaxed);
    b.min.store(0, std::memory_order_relaxed);
  }
}

void ClockOffset::sample(uint64_t host_ns, uint64_t gpu_ns) {
  if (gpu_ns == 0) return;
  const int64_t s = int64_t(host_ns - gpu_ns);
  const uint64_t epoch = host_ns / kBucketNs + 1;
  Bucket& b = buckets_[epoch % kBuckets];
  uint64_t e = b.epoch.load(std::memory_order_acquire);
  if (e != epoch) {
    // First sample of this second: claim the bucket (one thread wins; the
    // others fall through to the min update below).
    if (e < epoch && b.epoch.compare_exchange_strong(e, kClaimed, std::memory_order_acq_rel)) {
      b.min.store(s, std::memory_order_relaxed);
      b.epoch.store(epoch, std::memory_order_release);
      return;
    }
    if (b.epoch.load(std::memory_order_acquire) != epoch) return;
  }
  int64_t cur = b.min.load(std::memory_order_relaxed);
  while (s < cur && !b.min.compare_exchange_weak(cur, s, std::memory_order_relaxed)) {
  }
}

bool ClockOffset::estimate(uint64_t host_ns, int64_t* offset) const {
  const uint64_t now_epoch = host_ns / kBucketNs + 1;
  bool any = false;
  int64_t best = 0;
  for (const auto& b : buckets_) {
    const uint64_t e = b.epoch.load(std::memory_order_acquire);
    if (e == 0 || e == kClaimed || e + kBuckets <= now_epoch || e > now_epoch + 1) continue;
    const int64_t m = b.min.load(std::memory_order_relaxed);
    if (!any || m < best) best = m;
    any = true;
  }
  if (any) *offset = best;
  return any;
}

uint64_t ClockOffset::to_host(uint64_t gpu_ns, uint64_t host_now) const {
  int64_t off = 0;
  if (gpu_ns == 0 || !estimate(host_now, &off)) return gpu_ns;
  return uint64_t(int64_t(gpu_ns) + off);
}

}  // namespace hnccl
