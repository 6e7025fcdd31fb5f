#include "records.h"

#include <cstring>

namespace hnccl {

Func func_from_name(const char* n) {
  if (n == nullptr) return kFuncOther;
  for (int f = kAllReduce; f < kFuncCount; ++f)
    if (std::strcmp(n, func_name(uint8_t(f))) == 0) return Func(f);
  return kFuncOther;
}

const char* func_name(uint8_t f) {
  switch (f) {
    case kAllReduce: return "AllReduce";
    case kAllGather: return "AllGather";
    case kReduceScatter: return "ReduceScatter";
    case kBroadcast: return "Broadcast";
    case kReduce: return "Reduce";
    default: return "Other";
  }
}

size_t datatype_size(const char* n) {
  if (n == nullptr || std::strncmp(n, "nccl", 4) != 0) return 1;
  n += 4;
  struct Size { const char* name; size_t bytes; };
  static const Size sizes[] = {
      {"Int8", 1}, {"Char", 1}, {"Uint8", 1}, {"Float8e4m3", 1}, {"Float8e5m2", 1},
      {"Float16", 2}, {"Half", 2}, {"Bfloat16", 2},
      {"Int32", 4}, {"Int", 4}, {"Uint32", 4}, {"Float32", 4}, {"Float", 4},
      {"Int64", 8}, {"Uint64", 8}, {"Float64", 8}, {"Double", 8}};
  for (const Size& s : sizes)
    if (std::strcmp(n, s.name) == 0) return s.bytes;
  return 1;
}

void* ApiRing::publish(const ApiInfo& info) {
  const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
  const uint32_t slot = uint32_t(n % size_);
  ApiRec& r = recs_[slot];
  // Seqlock without fences (ThreadSanitizer understands this form): release
  // stores keep the "being written" mark ahead of the data, acquire loads on
  // the reader side keep the second ticket read behind the data.
  r.ticket.store(0, std::memory_order_relaxed);
  r.enqueue_ns.store(info.enqueue_ns, std::memory_order_release);
  r.gated_ns.store(info.gated_ns, std::memory_order_release);
  r.gate_slot.store(info.gate_slot, std::memory_order_release);
  r.graph_captured.store(info.graph_captured, std::memory_order_release);
  r.ticket.store(n + 1, std::memory_order_release);
  return encode(Kind::CollApi, slot, uint32_t(n + 1));
}

bool ApiRing::read(const void* handle, ApiInfo* out) const {
  const Handle h = decode(handle);
  if (h.kind != Kind::CollApi || h.slot >= size_) return false;
  const ApiRec& r = recs_[h.slot];
  const uint64_t t1 = r.ticket.load(std::memory_order_acquire);
  if (t1 == 0 || uint32_t(t1) != h.gen) return false;
  out->enqueue_ns = r.enqueue_ns.load(std::memory_order_acquire);
  out->gated_ns = r.gated_ns.load(std::memory_order_acquire);
  out->gate_slot = r.gate_slot.load(std::memory_order_acquire);
  out->graph_captured = r.graph_captured.load(std::memory_order_acquire);
  return r.ticket.load(std::memory_order_relaxed) == t1;
}

void ApiRing::set_gate(const void* handle, uint64_t gated_ns, int32_t gate_slot) {
  const Handle h = decode(handle);
  if (h.kind != Kind::CollApi || h.slot >= size_) return;
  ApiRec& r = recs_[h.slot];
  if (uint32_t(r.ticket.load(std::memory_order_relaxed)) != h.gen) return;
  r.gated_ns.store(gated_ns, std::memory_order_release);
  r.gate_slot.store(gate_slot, std::memory_order_release);
}

CollRec* CollPool::claim(uint32_t* slot, uint32_t* gen, uint32_t pending) {
  for (int probe = 0; probe < 8; ++probe) {
    const uint32_t s = cursor_.fetch_add(1, std::memory_order_relaxed) % size_;
    CollRec& r = recs_[s];
    uint32_t idle = 0;
    if (!r.busy.compare_exchange_strong(idle, 1, std::memory_order_acquire)) continue;
    const uint32_t g = gen_of(r.state.load(std::memory_order_relaxed)) + 1;
    r.gpu_start.store(0, std::memory_order_relaxed);
    r.gpu_end.store(0, std::memory_order_relaxed);
    r.net_bytes.store(0, std::memory_order_relaxed);
    r.state.store((uint64_t(g) << 32) | pending, std::memory_order_release);
    *slot = s;
    *gen = g;
    return &r;
  }
  return nullptr;
}

CollRec* CollPool::live(uint32_t slot, uint32_t gen) {
  if (slot >= size_) return nullptr;
  CollRec& r = recs_[slot];
  const uint64_t st = r.state.load(std::memory_order_acquire);
  if (gen_of(st) != gen || pending_of(st) == 0) return nullptr;
  return &r;
}

bool CollPool::count_stop(uint32_t slot, uint32_t gen) {
  if (slot >= size_) return false;
  std::atomic<uint64_t>& st = recs_[slot].state;
  uint64_t cur = st.load(std::memory_order_acquire);
  for (;;) {
    if (gen_of(cur) != gen || pending_of(cur) == 0) return false;
    if (st.compare_exchange_weak(cur, cur - 1, std::memory_order_acq_rel))
      return pending_of(cur) == 1;
  }
}

bool CollPool::force_complete(uint32_t slot, uint32_t gen) {
  std::atomic<uint64_t>& st = recs_[slot].state;
  uint64_t cur = st.load(std::memory_order_acquire);
  for (;;) {
    if (gen_of(cur) != gen || pending_of(cur) == 0) return false;
    if (st.compare_exchange_weak(cur, uint64_t(gen) << 32, std::memory_order_acq_rel)) return true;
  }
}

void CollPool::release(uint32_t slot) { recs_[slot].busy.store(0, std::memory_order_release); }

}  // namespace hnccl
