// gate-check: the cuda gate on a real GPU, through the plugin's own code
// (cuda_gate.cpp: dlopen("libcuda.so.1"), embedded fatbin, host-mapped
// schedule). For a series of slots it enqueues the gate and, right behind it
// on the same stream, a probe kernel that stamps %globaltimer when it starts:
// the probe's start is when the stream was released. Prints how far each
// release lands from its slot (GPU clock, so no host/GPU offset enters).
// Exit 0 when every release is within the target.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "cuda_gate.h"

namespace {

constexpr long long kTargetNs = 20000;  // release within 20 us of the slot

__global__ void probe(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}

uint64_t host_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

#define CK(x)                                                                    \
  do {                                                                           \
    cudaError_t e = (x);                                                         \
    if (e != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

// host - GPU clock, from the tightest of a few probe round trips.
int64_t measure_offset(cudaStream_t s, unsigned long long* stamp) {
  int64_t best = 0;
  uint64_t best_rtt = ~0ull;
  for (int i = 0; i < 20; ++i) {
    const uint64_t t0 = host_ns();
    probe<<<1, 1, 0, s>>>(stamp);
    CK(cudaStreamSynchronize(s));
    const uint64_t t1 = host_ns();
    if (t1 - t0 < best_rtt) best_rtt = t1 - t0, best = int64_t((t0 + t1) / 2) - int64_t(*stamp);
  }
  std::printf("host-GPU clock offset %lld ns (round trip %llu ns)\n", (long long)best, (unsigned long long)best_rtt);
  return best;
}

}  // namespace

int main() {
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));  // primary context current, as NCCL leaves it at init
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  hnccl::CudaGateCtx gate;
  std::string why;
  if (!hnccl::cuda_gate_prepare(&gate, &why)) {
    std::fprintf(stderr, "cuda_gate_prepare: %s\n", why.c_str());
    return 2;
  }
  unsigned long long* stamp;
  CK(cudaHostAlloc(&stamp, sizeof *stamp, cudaHostAllocMapped));
  const int64_t offset = measure_offset(stream, stamp);

  hnccl::Schedule s;
  s.valid = true;
  s.period_ns = 10000000;  // 10 ms
  s.shift_ns = 3000000;
  s.origin_ns = host_ns() / 1000000000ull * 1000000000ull;
  // Every arrival waits for its next slot: no tolerance, no late release.
  const auto strict = [](const hnccl::Schedule& sc, uint64_t cap) {
    HarmonicsGateRule r{};
    r.first_slot_ns = sc.origin_ns + sc.shift_ns;
    r.period_ns = sc.period_ns;
    r.cap_ns = cap;
    return r;
  };
  hnccl::cuda_gate_publish(strict(s, s.period_ns), offset);
  const uint64_t first_gpu = s.origin_ns + s.shift_ns - uint64_t(offset);

  std::vector<long long> errs;
  int bad = 0;
  srand(7);
  for (int i = 0; i < 50; ++i) {
    // Arrive anywhere in the period, like the end of a compute phase.
    const uint64_t pause = uint64_t(rand() % 10000) * 1000;
    const uint64_t until = host_ns() + pause;
    while (host_ns() < until) {
    }
    if (!hnccl::cuda_gate_launch(gate, stream, uint32_t(i), &why)) {
      std::fprintf(stderr, "cuda_gate_launch: %s\n", why.c_str());
      return 2;
    }
    probe<<<1, 1, 0, stream>>>(stamp);
    CK(cudaStreamSynchronize(stream));
    const uint64_t release = *stamp;
    const long long k = std::llround(double(release - first_gpu) / double(s.period_ns));
    const long long err = (long long)(release - (first_gpu + uint64_t(k) * s.period_ns));
    const uint64_t held = hnccl::cuda_gate_held_ns(uint32_t(i));
    errs.push_back(err);
    if (std::llabs(err) > kTargetNs || held == 0) ++bad;
  }
  std::vector<long long> a;
  for (long long e : errs) a.push_back(std::llabs(e));
  std::sort(a.begin(), a.end());
  std::printf("gate release vs slot over %zu slots: median %lld ns, p90 %lld ns, max %lld ns (target %lld ns)\n",
              a.size(), a[a.size() / 2], a[a.size() * 9 / 10], a.back(), kTargetNs);

  // The cap: a 50 ms period with a 2 ms cap never holds longer than 2 ms.
  s.period_ns = 50000000;
  hnccl::cuda_gate_publish(strict(s, 2000000), offset);
  uint64_t worst_hold = 0;
  for (int i = 0; i < 10; ++i) {
    hnccl::cuda_gate_launch(gate, stream, uint32_t(100 + i), &why);
    CK(cudaStreamSynchronize(stream));
    worst_hold = std::max(worst_hold, hnccl::cuda_gate_held_ns(uint32_t(100 + i)));
  }
  std::printf("cap 2 ms: longest hold %.3f ms\n", double(worst_hold) / 1e6);
  if (worst_hold > 2000000 + uint64_t(kTargetNs)) ++bad;

  // A schedule update reaches a gate already waiting: hold 200 ms slots,
  // then move the slot 20 ms ahead while the kernel spins.
  s.period_ns = 200000000;
  s.origin_ns = host_ns() + 150000000;
  s.shift_ns = 0;
  hnccl::cuda_gate_publish(strict(s, s.period_ns), offset);
  hnccl::cuda_gate_launch(gate, stream, 200, &why);
  probe<<<1, 1, 0, stream>>>(stamp);
  const uint64_t t_move = host_ns();
  while (host_ns() < t_move + 5000000) {
  }
  s.origin_ns = host_ns() + 20000000;
  hnccl::cuda_gate_publish(strict(s, s.period_ns), offset);
  CK(cudaStreamSynchronize(stream));
  const long long moved = (long long)(*stamp - (s.origin_ns - uint64_t(offset)));
  std::printf("schedule moved while holding: released %lld ns from the new slot\n", moved);
  if (std::llabs(moved) > kTargetNs) ++bad;

  // The release rule on the GPU (gate_release.h, the host gate's and the
  // simulator's): 20 ms slots, 2 ms of gap behind the burst, 5 ms share.
  // Arrivals late by 1 ms (within the gap: go), 3 ms (past the gap, later
  // than last time: next slot), 4 ms after that on-slot release (catching
  // up: go), 4.5 ms (later again: next slot).
  HarmonicsGateRule rule{};
  rule.period_ns = 20000000;
  rule.first_slot_ns = host_ns() + 50000000;
  rule.late_ns = 2000000;
  rule.share_ns = 5000000;
  rule.cap_ns = rule.period_ns;
  hnccl::cuda_gate_publish(rule, offset);
  const struct {
    int slot;
    uint64_t late_ns;
    bool goes;
  } arrivals[] = {{1, 1000000, true}, {3, 3000000, false}, {6, 4000000, true}, {8, 4500000, false}};
  for (int i = 0; i < 4; ++i) {
    const uint64_t at = rule.first_slot_ns + uint64_t(arrivals[i].slot) * rule.period_ns + arrivals[i].late_ns;
    while (host_ns() < at) {
    }
    hnccl::cuda_gate_launch(gate, stream, uint32_t(300 + i), &why);
    CK(cudaStreamSynchronize(stream));
    const uint64_t held = hnccl::cuda_gate_held_ns(uint32_t(300 + i));
    const uint64_t want = arrivals[i].goes ? 0 : rule.period_ns - arrivals[i].late_ns;
    const long long err = (long long)held - (long long)want;
    std::printf("late %.1f ms: held %.3f ms, rule says %.3f ms\n", double(arrivals[i].late_ns) / 1e6,
                double(held) / 1e6, double(want) / 1e6);
    if (held == 0 || std::llabs(err) > 100000) ++bad;  // launch latency: within 0.1 ms
  }

  std::printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
