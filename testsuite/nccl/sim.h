// A stand-in for NCCL driving a profiler plugin: builds v5 event descriptors
// and replays NCCL's orders — CollApi and Coll on the caller's thread, proxy
// and kernel-channel events on a second "proxy progress" thread — with GPU
// timestamps on a clock that runs a known offset behind the host clock.
#ifndef HARMONICS_TEST_NCCL_SIM_H
#define HARMONICS_TEST_NCCL_SIM_H

#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugins/nccl/profiler_v5.h"

namespace ncclsim {

uint64_t host_ns();
void sleep_ns(uint64_t ns);

// Lines the plugin logged through the NCCL logger.
std::vector<std::string> logged_lines();
void test_logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

// A worker thread standing in for NCCL's proxy progress thread.
class ProxyThread {
 public:
  ProxyThread();
  ~ProxyThread();
  void post(std::function<void()> f);
  void sync();  // wait until everything posted so far ran

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> q_;
  bool busy_ = false, stop_ = false;
  std::thread t_;
};

// What the harness played for one collective, to compare with the trace.
struct Played {
  uint64_t comm_id = 0;
  uint64_t seq = 0;
  std::string func;
  uint64_t bytes = 0;                       // count × datatype size, as played
  int nranks = 0;                           // the communicator's ranks (for bytes per ring edge)
  uint64_t enqueue_lo = 0, enqueue_hi = 0;  // enqueue time lies in between
  uint64_t gpu_start = 0, gpu_end = 0;      // host time of the kernel start/stop
  uint64_t blocked_ns = 0;                  // time startEvent(CollApi) took
  bool completes = true;
};

class Comm {
 public:
  Comm(ProfilerV5* t, uint64_t comm_id, int n_nodes, int rank, uint64_t gpu_behind_ns);
  ~Comm();
  bool ok() const { return init_rc_ == 0; }
  int mask() const { return mask_; }
  void* ctx() const { return ctx_; }
  uint64_t id() const { return id_; }
  int nranks() const { return nranks_; }  // four ranks per node
  void finalize();

  // Raw events.
  void* start(ProfEventDescrV5& d);
  void* coll_api(const char* func, size_t count, const char* dtype, void* stream, bool captured);
  void* coll(void* parent, uint64_t seq, const char* func, size_t count, const char* dtype, uint8_t nch);
  void* kernel_ch(void* parent, uint8_t ch, uint64_t ptimer);
  void* proxy_op(void* parent, pid_t pid, uint8_t ch);
  void* proxy_step(void* parent, int step);
  void record(void* h, int state, uint64_t arg);
  void stop(void* h);
  uint64_t gpu_clock(uint64_t host) const { return host - behind_; }

  // One collective the way NCCL runs it: CollApi start/stop, Coll start/stop
  // on this thread (the CollApi parent is already stopped), then on the proxy
  // thread per channel ProxyOp/ProxyStep and KernelCh start, a kernel of
  // `kernel_ns`, KernelCh stop. Returns what was played (filled in by the
  // proxy thread: call proxy.sync() before reading the GPU times).
  std::shared_ptr<Played> play(ProxyThread& proxy, uint64_t seq, const char* func, size_t count,
                               const char* dtype, uint8_t nch, uint64_t kernel_ns, void* stream = nullptr);

 private:
  ProfilerV5* t_;
  void* ctx_ = nullptr;
  int mask_ = 0;
  int init_rc_ = -1;
  uint64_t id_;
  int nranks_;
  uint64_t behind_;
  bool finalized_ = false;
};

// Trace lines (one JSON object each), parsed loosely: flat objects only.
struct TraceRec {
  std::string job, comm, func;
  int rank = -1;
  uint64_t seq = 0, bytes = 0, edge_bytes = 0, enqueue_ns = 0, gpu_start_ns = 0, gpu_end_ns = 0, gated_ns = 0;
};
std::vector<TraceRec> read_trace(const std::string& path, std::string* err);
std::string hex_comm(uint64_t id);

}  // namespace ncclsim

#endif
