// Host clocks. Schedules are absolute Unix-epoch times (clocks synchronised
// by PTP/NTP across nodes), and the GPU's %globaltimer is close to Unix-epoch
// ns too, so every timestamp the plugin keeps is CLOCK_REALTIME in ns.
#ifndef HARMONICS_NCCL_CLOCK_H
#define HARMONICS_NCCL_CLOCK_H

#include <cstdint>
#include <ctime>

namespace hnccl {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Wait until an absolute CLOCK_REALTIME instant: sleep until shortly before
// (resuming after signals), then spin without yielding: a thread that yields
// on a busy node gets the CPU back a time slice (milliseconds) later, and the
// slot is what matters.
constexpr uint64_t kSpinNs = 300000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline void sleep_until_ns(uint64_t t) {
  if (t > kSpinNs && now_ns() + kSpinNs < t) {
    const uint64_t wake = t - kSpinNs;
    timespec ts;
    ts.tv_sec = time_t(wake / 1000000000ull);
    ts.tv_nsec = long(wake % 1000000000ull);
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
  }
  while (now_ns() < t) cpu_relax();
}

}  // namespace hnccl

#endif
