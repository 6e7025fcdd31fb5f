// Process-wide plugin state. Created at the first init and never destroyed:
// NCCL may hand us stale handles at any time, the background threads may be
// mid-loop at process exit, and the library is linked -z nodelete so that its
// code stays mapped after NCCL's dlclose. Nothing here grows per collective.
#ifndef HARMONICS_NCCL_STATE_H
#define HARMONICS_NCCL_STATE_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "clock_offset.h"
#include "completed.h"
#include "config.h"
#include "cuda_gate.h"
#include "mpsc_queue.h"
#include "records.h"
#include "rhythm.h"
#include "schedule.h"

namespace hnccl {

constexpr int kMaxComms = 256;

// One communicator (the ctx NCCL passes back). Slots are reused after
// finalize with a new generation, so records of a finalized comm are told apart.
struct Comm {
  std::atomic<bool> live{false};
  std::atomic<uint32_t> gen{0};
  std::atomic<uint64_t> comm_id{0};
  std::atomic<int32_t> rank{0};
  std::atomic<int32_t> nranks{0};
  std::atomic<int32_t> n_nodes{0};
  std::atomic<GateMode> gate{GateMode::Off};  // effective: Cuda, Host or Off
  std::atomic<bool> registered{false};        // told to schedd on this connection
  CudaGateCtx cuda;                           // set in init before live
  std::atomic<uint64_t> last_enqueue_ns{0};
  // How late the last gated release went past its slot (0: on it).
  std::atomic<uint64_t> last_late_ns{0};
};

struct Counters {
  std::atomic<uint64_t> colls{0}, completed{0}, pool_full{0}, queue_full{0}, expired{0},
      stale_parent{0}, foreign{0}, ignored{0}, gated_host{0}, gated_cuda{0}, reports{0},
      schedules{0}, schedd_errors{0};
};

struct Plugin {
  Config cfg;
  int64_t job_num = 0;       // SLURM_JOB_ID as a number; 0 = none (never gate)
  ApiRing api{8192};
  CollPool colls{4096};
  MpscQueue<Completed> done{16384};
  ClockOffset clock;
  ScheduleCell schedule;
  std::atomic<uint64_t> schedule_valid_until_ns{0};
  // The job's timing noise for the release rule (noise_slip_ns of the rhythm
  // estimate), published by the drain thread.
  std::atomic<uint64_t> noise_ns{0};
  std::atomic<uint64_t> iteration_pause_ns{0};  // gate bursts after a pause this long (0: every burst; kNoOpening: none)
  std::atomic<uint64_t> pushed{0}, drained{0};
  Counters n;
  Comm comms[kMaxComms];
  std::mutex comms_mu;  // init/finalize only
  std::atomic<int> live_comms{0};
  std::atomic<int32_t> pid{0};  // getpid() is a system call: cached, refreshed after fork

  std::mutex rhythm_mu;  // the drain thread publishes, the link thread reads
  Rhythm rhythm;

  std::atomic<bool> stop{false};
  std::thread drain_thread, link_thread;

  // A hold never exceeds one period; GateCap / HARMONICS_GATE_CAP_US lower it.
  uint64_t gate_cap(const Schedule& s) const {
    return cfg.gate_cap_ns && cfg.gate_cap_ns < s.period_ns ? cfg.gate_cap_ns : s.period_ns;
  }
};

// The state, created (config read, threads started) by the first call.
Plugin& plugin_instance();
// nullptr until the first init.
Plugin* plugin_if_ready();

// Background threads (background.cpp, link.cpp).
void drain_main(Plugin* p);
void link_main(Plugin* p);
// Moves finished records to the queue (any NCCL thread).
void finish_record(Plugin& p, uint32_t slot);

}  // namespace hnccl

#endif
