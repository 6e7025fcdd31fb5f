// The cuda gate: one block, one working thread, enqueued on the user's stream
// right before NCCL's kernel. It holds the stream until the job's next slot
// (read from host-mapped memory at run time, so late schedule updates apply)
// by the host gate's release rule (gate_release.h) and never longer than the
// cap, then records how long it held.
#include "gate_abi.h"
#include "gate_release.h"

__device__ static unsigned long long gpu_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ static void read_schedule(const volatile HarmonicsGateSchedule* s,
                                     HarmonicsGateRule* out) {
  for (int tries = 0; tries < 64; ++tries) {
    const unsigned long long q = s->seq;
    if (q & 1ull) continue;
    out->first_slot_ns = s->first_slot_ns;
    out->period_ns = s->enabled ? s->period_ns : 0;
    out->cap_ns = s->cap_ns;
    out->tolerance_ns = s->tolerance_ns;
    out->late_ns = s->late_ns;
    out->share_ns = s->share_ns;
    out->noise_ns = s->noise_ns;
    __threadfence_system();
    if (s->seq == q) return;
  }
  out->period_ns = 0;  // host stuck mid-update: pass
}

// `last_late` is this communicator's memory of its previous release
// (gate_release.h), in host-mapped memory, read at the start and written
// once the hold is over: a re-aim after a schedule update decides anew from
// the same memory.
extern "C" __global__ void harmonics_gate(const HarmonicsGateSchedule* sched,
                                          unsigned long long* held,
                                          unsigned long long* last_late) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const volatile HarmonicsGateSchedule* s = sched;
  const unsigned long long t0 = gpu_now();
  const unsigned long long before = *(volatile unsigned long long*)last_late;
  HarmonicsGateRule cur;
  read_schedule(s, &cur);
  unsigned long long seen = s->seq;
  unsigned long long memory = before;
  unsigned long long release = harmonics_gate_release(cur, t0, &memory);
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
      memory = before;
      release = harmonics_gate_release(cur, t0, &memory);
    }
  }
  *(volatile unsigned long long*)last_late = memory;
  *held = now - t0 + 1ull;
  __threadfence_system();
}
