// The release rule of the NCCL hook's gates, in integer nanoseconds: the one
// function the host gate (schedule.cpp, on the user's thread) and the cuda
// gate kernel (gate_kernel.cu, on the GPU) both run, so that the two gates
// and the simulator's (policy/release.h, which it mirrors and is tested
// against) release a collective at the same moment.
//
// A job ready at or before a slot waits for it. Late past the latest slot by
// at most the tolerance (the clocks' error) it is on the slot. Late by at most
// `late_ns` (the free link time behind its bursts in schedd's plan, at most
// the share) it goes at once; so it does, late by at most `share_ns` of the
// period, while it catches up on a slip (it was on its slot at its previous
// release, or is less late now than then, or later by less than its own
// timing noise `noise_ns`). Later, it waits for its next slot:
// a ring late past the gap behind it and not catching up would run into the
// next ring's slot every iteration. Never held longer than `cap_ns`.
//
// Plain C++ without the standard library: nvcc compiles it for the device.
#ifndef HARMONICS_NCCL_GATE_RELEASE_H
#define HARMONICS_NCCL_GATE_RELEASE_H

#ifdef __CUDACC__
#define HARMONICS_GATE_HD __host__ __device__
#else
#define HARMONICS_GATE_HD
#endif

struct HarmonicsGateRule {
  unsigned long long first_slot_ns;  // origin + shift, in the gate's clock
  unsigned long long period_ns;      // 0: not gated
  unsigned long long tolerance_ns;   // this late after a slot counts as on it
  unsigned long long late_ns;        // the gap behind the bursts, at most share_ns
  unsigned long long share_ns;       // how late a job catching up may be
  unsigned long long noise_ns;       // a slip growing by less is the job's own jitter
  unsigned long long cap_ns;         // the longest hold
};

// Release time for a first collective ready at `now`. `*last_late` is the
// job's memory: how late its previous release went (0: on a slot); read and
// updated.
HARMONICS_GATE_HD inline unsigned long long harmonics_gate_release(const HarmonicsGateRule& r,
                                                                   unsigned long long now,
                                                                   unsigned long long* last_late) {
  if (r.period_ns == 0) return now;
  if (now <= r.first_slot_ns) {
    *last_late = 0;
    const unsigned long long until = now + r.cap_ns;
    return r.first_slot_ns < until ? r.first_slot_ns : until;
  }
  const unsigned long long since = (now - r.first_slot_ns) % r.period_ns;  // past the latest slot
  const unsigned long long prev = *last_late;
  const bool catching_up = prev == 0 || since < prev + r.noise_ns;
  const unsigned long long allowance = r.late_ns > r.tolerance_ns ? r.late_ns : r.tolerance_ns;
  if (since <= allowance || (catching_up && since <= r.share_ns)) {
    *last_late = since <= r.tolerance_ns ? 0 : since;
    return now;
  }
  *last_late = 0;
  const unsigned long long wait = r.period_ns - since;
  return now + (wait < r.cap_ns ? wait : r.cap_ns);
}

#endif
