// The drain thread: takes completed collectives off the lock-free queue and
// does everything that may be slow — the trace file, the rhythm estimate,
// expiring records whose kernel stops never came (abort paths), keeping the
// cuda gate's host-mapped schedule in step with the clock offset.
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "state.h"
#include "trace.h"

namespace hnccl {

namespace {

constexpr uint64_t kRhythmEveryNs = 100000000ull;   // 100 ms
constexpr uint64_t kExpireEveryNs = 1000000000ull;  // 1 s
constexpr uint64_t kGatePublishEveryNs = 10000000ull;  // 10 ms

void expire_records(Plugin& p, uint64_t now) {
  for (uint32_t s = 0; s < p.colls.size(); ++s) {
    CollRec& r = p.colls.at(s);
    if (r.busy.load(std::memory_order_acquire) == 0) continue;
    const uint64_t st = r.state.load(std::memory_order_acquire);
    if (CollPool::pending_of(st) == 0) continue;
    const uint64_t created = r.created_ns.load(std::memory_order_relaxed);
    if (created == 0 || now < created + p.cfg.expire_ns) continue;
    if (p.colls.force_complete(s, CollPool::gen_of(st))) {
      p.colls.release(s);
      p.n.expired.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void publish_rhythm(Plugin& p, RhythmEstimator& est, uint64_t now) {
  est.flush(now);
  Rhythm r = est.estimate();
  const uint64_t opening = next_opening_pause_ns(p.iteration_pause_ns.load(std::memory_order_relaxed), r);
  if (opening == kNoOpening)
    log_once(Once::Opening, "%zu phases per iteration and none after a clearly longer pause: no burst is held",
             r.phases.size());
  p.iteration_pause_ns.store(opening, std::memory_order_relaxed);
  p.noise_ns.store(noise_slip_ns(r.valid, r.jitter_ns), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(p.rhythm_mu);
  p.rhythm = std::move(r);
}

void publish_gate(Plugin& p, uint64_t now) {
  if (cuda_gate_block() == nullptr) return;
  Schedule s = p.schedule.load();
  int64_t offset = 0;
  p.clock.estimate(now, &offset);
  cuda_gate_publish(gate_rule(s, p.cfg.gate_tolerance_ns, p.gate_cap(s), p.noise_ns.load(std::memory_order_relaxed)),
                    offset);
}

}  // namespace

void drain_main(Plugin* pp) {
  Plugin& p = *pp;
  TraceWriter trace;
  if (!p.cfg.trace_path.empty()) {
    std::string err;
    if (!trace.open(p.cfg.trace_path, &err)) log_once(Once::Trace, "%s: no trace", err.c_str());
  }
  RhythmEstimator est(p.cfg.burst_gap_ns);
  uint64_t next_rhythm = 0, next_expire = 0, next_gate = 0;
  while (!p.stop.load(std::memory_order_relaxed)) {
    try {
      Completed c;
      uint64_t n = 0;
      while (p.done.pop(&c)) {
        if (c.gate_slot >= 0) c.gated_ns = cuda_gate_held_ns(uint32_t(c.gate_slot));
        if (trace.is_open() && !trace.write(c, p.cfg.job_id)) {
          log_once(Once::Trace, "writing %s failed: trace stopped", p.cfg.trace_path.c_str());
          trace.close();
        }
        CollSample s;
        s.start_ns = c.gpu_start_ns ? c.gpu_start_ns : c.enqueue_ns + c.gated_ns;
        s.end_ns = c.gpu_end_ns ? c.gpu_end_ns : s.start_ns;
        s.bytes = c.edge_bytes;  // schedd reads phase bytes as bytes per ring edge
        s.held_ns = c.gated_ns;
        s.call_ns = c.enqueue_ns;
        s.resumed_ns = c.enqueue_ns + (c.gate_slot < 0 ? c.gated_ns : 0);  // the host gate holds the call
        est.add(s);
        ++n;
      }
      if (n && trace.is_open() && !trace.flush()) {
        log_once(Once::Trace, "writing %s failed: trace stopped", p.cfg.trace_path.c_str());
        trace.close();
      }
      if (n) p.drained.fetch_add(n, std::memory_order_release);
      const uint64_t now = now_ns();
      if (now >= next_rhythm) publish_rhythm(p, est, now), next_rhythm = now + kRhythmEveryNs;
      if (now >= next_expire) expire_records(p, now), next_expire = now + kExpireEveryNs;
      if (now >= next_gate) publish_gate(p, now), next_gate = now + kGatePublishEveryNs;
      if (n == 0) usleep(1000);
    } catch (...) {
      log_once(Once::Internal, "internal error in the drain thread");
      usleep(100000);
    }
  }
}

}  // namespace hnccl
