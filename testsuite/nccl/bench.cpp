// nccl-bench: the plugin's CPU cost per collective, as NCCL would pay it.
// Loads the plugin like NCCL (NCCL_PROFILER_PLUGIN) and replays, on one
// thread, the callbacks of one collective on two channels: CollApi, Coll,
// two ProxyOps with one ProxyStep each, two KernelCh with their stop state.
// Prints ns per collective; run with and without HARMONICS_TRACE.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "plugin_loader.h"
#include "sim.h"

using namespace ncclsim;

namespace {

// A plugin that does nothing: what the replay itself costs, subtracted.
int null_init(void** ctx, uint64_t, int*, const char*, int, int, int, ProfLoggerV5) {
  static int c;
  *ctx = &c;
  return 0;
}
int null_start(void*, void** h, ProfEventDescrV5*) {
  static int e;
  *h = &e;
  return 0;
}
int null_stop(void*) { return 0; }
int null_record(void*, int, ProfStateArgsV5*) { return 0; }
int null_finalize(void*) { return 0; }
ProfilerV5 null_table = {"null", null_init, null_start, null_stop, null_record, null_finalize};

// Median ns per collective over 20 rounds of n/20 (a round fits the
// plugin's completion queue; the pause lets its drain thread catch up).
double run(ProfilerV5* table, long n) {
  Comm c(table, 0xbe7c, 2, 0, 1000000);
  std::vector<double> rounds;
  const pid_t me = getpid();
  for (int round = 0; round < 20; ++round) {
    const long per = n / 20;
    const uint64_t t0 = host_ns();
    for (long i = 0; i < per; ++i) {
      void* api = c.coll_api("AllReduce", 1 << 20, "ncclFloat32", nullptr, false);
      c.stop(api);
      void* coll = c.coll(api, uint64_t(round * per + i), "AllReduce", 1 << 20, "ncclFloat32", 2);
      c.stop(coll);
      void* op[2];
      void* ch[2];
      for (int k = 0; k < 2; ++k) {
        op[k] = c.proxy_op(coll, me, uint8_t(k));
        void* st = c.proxy_step(op[k], 0);
        c.record(st, kStateProxyStepSendWait, 1 << 19);
        c.stop(st);
      }
      const uint64_t g = host_ns() - 1000000;
      for (int k = 0; k < 2; ++k) ch[k] = c.kernel_ch(coll, uint8_t(k), g);
      for (int k = 0; k < 2; ++k) {
        c.record(ch[k], kStateKernelChStop, g + 1000);
        c.stop(ch[k]);
        c.stop(op[k]);
      }
    }
    rounds.push_back(double(host_ns() - t0) / double(per));
    usleep(30000);
  }
  std::sort(rounds.begin(), rounds.end());
  c.finalize();
  return rounds[rounds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 200000;
  Loaded l = load_profiler(std::getenv("NCCL_PROFILER_PLUGIN"));
  if (l.table == nullptr) {
    std::fprintf(stderr, "cannot load the plugin: %s\n", l.error.c_str());
    return 2;
  }
  const double base = run(&null_table, n);
  const double with = run(l.table, n);
  std::printf("nccl-bench: %ld collectives (2 channels, 17 callbacks each), trace %s: %.0f ns per collective "
              "in the plugin (%.0f with the replay, %.0f replay alone)\n",
              n, std::getenv("HARMONICS_TRACE") ? "on" : "off", with - base, with, base);
  return 0;
}
