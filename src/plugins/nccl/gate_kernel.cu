// The cuda gate: one block, one working thread, enqueued on the user's stream
// right before NCCL's kernel. It holds the stream until the job's next slot
// (read from host-mapped memory at run time, so late schedule updates apply)
// and never longer than the cap, then records how long it held.
#include "gate_abi.h"

__device__ static unsigned long long gpu_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ static void read_schedule(const volatile HarmonicsGateSchedule* s,
                                     HarmonicsGateSchedule* out) {
  for (int tries = 0; tries < 64; ++tries) {
    const unsigned long long q = s->seq;
    if (q & 1ull) continue;
    out->first_slot_ns = s->first_slot_ns;
    out->period_ns = s->period_ns;
    out->cap_ns = s->cap_ns;
    out->tolerance_ns = s->tolerance_ns;
    out->enabled = s->enabled;
    __threadfence_system();
    if (s->seq == q) return;
  }
  out->enabled = 0;  // host stuck mid-update: pass
}

// Same rule as the host's next_release() (schedule.cpp).
__device__ static unsigned long long release_time(const HarmonicsGateSchedule& s,
                                                  unsigned long long now) {
  if (!s.enabled || s.period_ns == 0) return now;
  if (now <= s.first_slot_ns) return s.first_slot_ns;
  const unsigned long long since = (now - s.first_slot_ns) % s.period_ns;
  if (since <= s.tolerance_ns) return now;
  return now + (s.period_ns - since);
}

extern "C" __global__ void harmonics_gate(const HarmonicsGateSchedule* sched,
                                          unsigned long long* held) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const volatile HarmonicsGateSchedule* s = sched;
  const unsigned long long t0 = gpu_now();
  HarmonicsGateSchedule cur;
  read_schedule(s, &cur);
  unsigned long long seen = s->seq;
  unsigned long long release = release_time(cur, t0);
  unsigned long long now = t0;
  for (;;) {
    const unsigned long long limit = t0 + cur.cap_ns;
    const unsigned long long until = release < limit ? release : limit;
    now = gpu_now();
    if (now >= until) break;
    const unsigned long long left = until - now;
    // Sleep in halves while far away, spin for the last 20 us.
    if (left > 20000ull) __nanosleep((unsigned)(left / 2 < 500000ull ? left / 2 : 500000ull));
    if (s->seq != seen) {  // schedule updated while holding: re-aim from t0
      read_schedule(s, &cur);
      seen = s->seq;
      release = release_time(cur, t0);
    }
  }
  *held = now - t0 + 1ull;
  __threadfence_system();
}
