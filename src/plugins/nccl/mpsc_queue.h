// Bounded lock-free queue of plain records from NCCL's threads (producers) to
// the reporting thread (consumer). Each cell carries a sequence number that
// says whose turn it is (the classic bounded-array design); a full queue
// makes push() fail at once so the caller drops and counts, never waits.
#ifndef HARMONICS_NCCL_MPSC_QUEUE_H
#define HARMONICS_NCCL_MPSC_QUEUE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace hnccl {

template <typename T>
class MpscQueue {
 public:
  explicit MpscQueue(size_t capacity_pow2)
      : mask_(capacity_pow2 - 1), cells_(new Cell[capacity_pow2]) {
    for (size_t i = 0; i < capacity_pow2; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  bool push(const T& v) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & mask_];
      const size_t seq = c.seq.load(std::memory_order_acquire);
      const intptr_t diff = intptr_t(seq) - intptr_t(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = v;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Single consumer.
  bool pop(T* out) {
    Cell& c = cells_[head_ & mask_];
    const size_t seq = c.seq.load(std::memory_order_acquire);
    if (intptr_t(seq) - intptr_t(head_ + 1) < 0) return false;  // empty
    *out = c.value;
    c.seq.store(head_ + mask_ + 1, std::memory_order_release);
    ++head_;
    return true;
  }

 private:
  struct Cell {
    std::atomic<size_t> seq;
    T value;
  };
  const size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) size_t head_ = 0;
};

}  // namespace hnccl

#endif
