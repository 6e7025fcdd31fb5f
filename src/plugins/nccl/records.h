// Event records: preallocated, process-wide, never freed. NCCL hands our
// handles back to us later, sometimes after the event was stopped (a CollApi
// is the parent of Coll events at ncclGroupEnd and at every graph replay), so
// a handle is not a pointer but {kind, slot, generation}: a stale handle finds
// a newer generation in its slot and is ignored instead of corrupting memory.
#ifndef HARMONICS_NCCL_RECORDS_H
#define HARMONICS_NCCL_RECORDS_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace hnccl {

enum class Kind : uint8_t { None = 0, CollApi = 1, Coll = 2, ProxyOp = 3, ProxyStep = 4, KernelCh = 5 };

struct Handle {
  Kind kind = Kind::None;
  uint32_t slot = 0;  // < 2^24
  uint32_t gen = 0;
};

inline void* encode(Kind k, uint32_t slot, uint32_t gen) {
  const uint64_t v = (uint64_t(slot) << 40) | (uint64_t(gen) << 8) | uint64_t(k);
  return reinterpret_cast<void*>(v);
}

inline Handle decode(const void* h) {
  const uint64_t v = reinterpret_cast<uint64_t>(h);
  Handle d;
  const uint8_t k = uint8_t(v & 0xff);
  if (k < uint8_t(Kind::CollApi) || k > uint8_t(Kind::KernelCh)) return d;
  d.kind = Kind(k);
  d.gen = uint32_t((v >> 8) & 0xffffffffu);
  d.slot = uint32_t(v >> 40);
  return d;
}

// Collective function names NCCL passes (coll.func / collApi.func).
enum Func : uint8_t { kFuncOther = 0, kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kFuncCount };
Func func_from_name(const char* name);
const char* func_name(uint8_t f);
// Size in bytes of an NCCL datatype name ("ncclFloat32"); 1 when unknown.
size_t datatype_size(const char* name);

// One ncclAllReduce/... call as seen by startEvent(CollApi). Written once by
// the user's thread, read (maybe much later) as the parent of Coll events:
// a seqlock-style ticket tells a reader whether the slot was reused meanwhile.
struct ApiRec {
  std::atomic<uint64_t> ticket{0};  // 0 while being written, else alloc number + 1
  std::atomic<uint64_t> enqueue_ns{0};
  std::atomic<uint64_t> gated_ns{0};
  std::atomic<int32_t> gate_slot{-1};  // cuda gate result slot, -1 if not gated by cuda
  std::atomic<bool> graph_captured{false};
};

struct ApiInfo {
  uint64_t enqueue_ns = 0;
  uint64_t gated_ns = 0;
  int32_t gate_slot = -1;
  bool graph_captured = false;
};

class ApiRing {
 public:
  explicit ApiRing(uint32_t size) : size_(size), recs_(new ApiRec[size]) {}
  // Reserve the next slot; returns the handle to give NCCL.
  void* publish(const ApiInfo& info);
  // Copy out the record behind a CollApi handle; false if stale or foreign.
  bool read(const void* handle, ApiInfo* out) const;
  // Rewrite the gate fields of a record this thread published.
  void set_gate(const void* handle, uint64_t gated_ns, int32_t gate_slot);

 private:
  const uint32_t size_;
  std::unique_ptr<ApiRec[]> recs_;
  std::atomic<uint64_t> next_{0};
};

// One collective (Coll event) from enqueue to its last KernelCh stop.
// `state` packs {generation:32, pending:32}: pending counts the Coll stop plus
// one stop per kernel channel; whoever brings it to zero completes the record.
struct CollRec {
  std::atomic<uint32_t> busy{0};
  std::atomic<uint64_t> state{0};
  std::atomic<uint32_t> comm_slot{0};
  std::atomic<uint32_t> comm_gen{0};
  std::atomic<uint64_t> seq{0};
  std::atomic<uint64_t> bytes{0};       // count × datatype size, as NCCL gives it
  std::atomic<uint64_t> edge_bytes{0};  // what crosses each ring edge (model/collective_bytes.h)
  std::atomic<uint64_t> net_bytes{0};
  std::atomic<uint64_t> enqueue_ns{0};
  std::atomic<uint64_t> gated_ns{0};
  std::atomic<int32_t> gate_slot{-1};
  std::atomic<uint64_t> created_ns{0};
  std::atomic<uint64_t> gpu_start{0};  // min pTimer over channels, 0 = none
  std::atomic<uint64_t> gpu_end{0};    // max pTimer over channel stops
  std::atomic<uint8_t> func{0};
  std::atomic<uint8_t> channels{0};
};

class CollPool {
 public:
  explicit CollPool(uint32_t size) : size_(size), recs_(new CollRec[size]) {}
  // Claim a free record (a few probes from a moving cursor); nullptr when full.
  CollRec* claim(uint32_t* slot, uint32_t* gen, uint32_t pending);
  // The record behind (slot, gen) if that generation is still live.
  CollRec* live(uint32_t slot, uint32_t gen);
  // Count one stop; true if this one completed the record (caller emits+frees).
  bool count_stop(uint32_t slot, uint32_t gen);
  // Force completion of a record (expiry); true if the caller won it.
  bool force_complete(uint32_t slot, uint32_t gen);
  void release(uint32_t slot);
  uint32_t size() const { return size_; }
  CollRec& at(uint32_t slot) { return recs_[slot]; }
  static uint32_t gen_of(uint64_t state) { return uint32_t(state >> 32); }
  static uint32_t pending_of(uint64_t state) { return uint32_t(state & 0xffffffffu); }

 private:
  const uint32_t size_;
  std::unique_ptr<CollRec[]> recs_;
  std::atomic<uint32_t> cursor_{0};
};

}  // namespace hnccl

#endif
