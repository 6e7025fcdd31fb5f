// Memory shared between the host and the cuda gate kernel (host-mapped, so the
// host's schedule updates reach kernels already queued). Plain C layout, used
// by the plugin, the kernel (gate_kernel.cu) and the test's fake libcuda.
#ifndef HARMONICS_NCCL_GATE_ABI_H
#define HARMONICS_NCCL_GATE_ABI_H

#define HARMONICS_GATE_KERNEL "harmonics_gate"
#define HARMONICS_GATE_RESULTS 4096

// How many communicators have a memory of their own for the release rule;
// more wrap around and share one (a process rarely gates more than one).
#define HARMONICS_GATE_COMMS 64

// Times are in the GPU's %globaltimer ns (the host converts with its clock
// offset estimate). The host bumps `seq` to odd before writing and to even
// after: the kernel re-reads until it sees the same even value twice. The
// fields are gate_release.h's HarmonicsGateRule, which the kernel applies.
struct HarmonicsGateSchedule {
  unsigned long long seq;
  unsigned long long first_slot_ns;  // origin + shift, GPU clock
  unsigned long long period_ns;
  unsigned long long cap_ns;         // hard cap on any hold
  unsigned long long tolerance_ns;   // this late after a slot counts as on it
  unsigned long long late_ns;        // late by this much goes at once (the gap behind the bursts)
  unsigned long long share_ns;       // ... or by this much while catching up on a slip
  unsigned long long noise_ns;       // a slip growing by less is the job's own jitter
  unsigned long long enabled;        // 0: pass at once
};

struct HarmonicsGateBlock {
  struct HarmonicsGateSchedule schedule;
  // Per launch: 0 = not run yet, else 1 + ns the kernel held the stream.
  unsigned long long held[HARMONICS_GATE_RESULTS];
  // Per communicator, written by its gate kernels only: how late past its
  // slot its previous release went (0: on a slot), the rule's memory.
  unsigned long long last_late[HARMONICS_GATE_COMMS];
};

#endif
