#include "sim.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>

namespace ncclsim {

uint64_t host_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void sleep_ns(uint64_t ns) {
  timespec ts{time_t(ns / 1000000000ull), long(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

namespace {
// Never destroyed: the plugin's background threads outlive main().
std::mutex* g_log_mu = new std::mutex;
std::vector<std::string>* g_log = new std::vector<std::string>;
}  // namespace

void test_logger(int level, unsigned long, const char* file, int line, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "[nccl log %d %s:%d] %s\n", level, file, line, buf);
  std::lock_guard<std::mutex> lock(*g_log_mu);
  g_log->push_back(buf);
}

std::vector<std::string> logged_lines() {
  std::lock_guard<std::mutex> lock(*g_log_mu);
  return *g_log;
}

ProxyThread::ProxyThread() : t_([this] { run(); }) {}

ProxyThread::~ProxyThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  t_.join();
}

void ProxyThread::post(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    q_.push_back(std::move(f));
  }
  cv_.notify_all();
}

void ProxyThread::sync() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return q_.empty() && !busy_; });
}

void ProxyThread::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !q_.empty(); });
    if (q_.empty() && stop_) return;
    auto f = std::move(q_.front());
    q_.pop_front();
    busy_ = true;
    lock.unlock();
    f();
    lock.lock();
    busy_ = false;
    if (q_.empty()) idle_cv_.notify_all();
  }
}

Comm::Comm(ProfilerV5* t, uint64_t comm_id, int n_nodes, int rank, uint64_t gpu_behind_ns)
    : t_(t), id_(comm_id), nranks_(n_nodes * 4), behind_(gpu_behind_ns) {
  char name[64];
  snprintf(name, sizeof name, "sim-%" PRIx64, comm_id);
  init_rc_ = t_->init(&ctx_, comm_id, &mask_, name, n_nodes, nranks_, rank, test_logger);
}

Comm::~Comm() { finalize(); }

void Comm::finalize() {
  if (finalized_) return;
  finalized_ = true;
  t_->finalize(ctx_);
}

void* Comm::start(ProfEventDescrV5& d) {
  void* h = reinterpret_cast<void*>(0x1);  // must be overwritten
  t_->startEvent(ctx_, &h, &d);
  return h;
}

namespace {
// A zeroed descriptor of one event type, as NCCL fills one per event.
ProfEventDescrV5 descr(uint64_t type, void* parent) {
  ProfEventDescrV5 d;
  std::memset(&d, 0, sizeof d);
  d.type = type;
  d.parentObj = parent;
  return d;
}
}  // namespace

void* Comm::coll_api(const char* func, size_t count, const char* dtype, void* stream, bool captured) {
  ProfEventDescrV5 d = descr(kEvCollApi, nullptr);
  d.collApi.func = func;
  d.collApi.count = count;
  d.collApi.datatype = dtype;
  d.collApi.root = 0;
  d.collApi.stream = stream;
  d.collApi.graphCaptured = captured;
  return start(d);
}

void* Comm::coll(void* parent, uint64_t seq, const char* func, size_t count, const char* dtype, uint8_t nch) {
  ProfEventDescrV5 d = descr(kEvColl, parent);
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.datatype = dtype;
  d.coll.nChannels = nch;
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  return start(d);
}

void* Comm::kernel_ch(void* parent, uint8_t ch, uint64_t ptimer) {
  ProfEventDescrV5 d = descr(kEvKernelCh, parent);
  d.kernelCh.channelId = ch;
  d.kernelCh.pTimer = ptimer;
  return start(d);
}

void* Comm::proxy_op(void* parent, pid_t pid, uint8_t ch) {
  ProfEventDescrV5 d = descr(kEvProxyOp, parent);
  d.proxyOp.pid = pid;
  d.proxyOp.channelId = ch;
  d.proxyOp.peer = 1;
  d.proxyOp.nSteps = 2;
  d.proxyOp.chunkSize = 1 << 19;
  d.proxyOp.isSend = 1;
  return start(d);
}

void* Comm::proxy_step(void* parent, int step) {
  ProfEventDescrV5 d = descr(kEvProxyStep, parent);
  d.proxyStep.step = step;
  return start(d);
}

void Comm::record(void* h, int state, uint64_t arg) {
  ProfStateArgsV5 a;
  std::memset(&a, 0, sizeof a);
  a.kernelCh.pTimer = arg;  // same 8 bytes as transSize
  t_->recordEventState(h, state, &a);
}

void Comm::stop(void* h) { t_->stopEvent(h); }

std::shared_ptr<Played> Comm::play(ProxyThread& proxy, uint64_t seq, const char* func, size_t count,
                                   const char* dtype, uint8_t nch, uint64_t kernel_ns, void* stream) {
  auto p = std::make_shared<Played>();
  p->comm_id = id_;
  p->seq = seq;
  p->func = func;
  p->nranks = nranks_;
  p->enqueue_lo = host_ns();
  void* api = coll_api(func, count, dtype, stream, false);
  p->enqueue_hi = host_ns();
  p->blocked_ns = p->enqueue_hi - p->enqueue_lo;
  stop(api);
  void* c = coll(api, seq, func, count, dtype, nch);  // parent already stopped
  stop(c);                                            // "enqueued", not finished
  proxy.post([this, p, c, nch, kernel_ns] {
    const pid_t me = getpid();
    std::vector<void*> ops, chans;
    for (uint8_t ch = 0; ch < nch; ++ch) {
      void* op = proxy_op(c, me, ch);
      void* st = proxy_step(op, 0);
      record(st, kStateProxyStepSendWait, 4096);
      stop(st);
      ops.push_back(op);
    }
    const uint64_t t0 = host_ns();
    for (uint8_t ch = 0; ch < nch; ++ch) chans.push_back(kernel_ch(c, ch, gpu_clock(host_ns())));
    if (kernel_ns) sleep_ns(kernel_ns);
    uint64_t t1 = 0;
    for (uint8_t ch = 0; ch < nch; ++ch) {
      t1 = host_ns();
      record(chans[ch], kStateKernelChStop, gpu_clock(t1));
      stop(chans[ch]);
    }
    for (void* op : ops) stop(op);
    p->gpu_start = t0;
    p->gpu_end = t1;
  });
  return p;
}

namespace {
bool find_raw(const std::string& line, const std::string& key, std::string* val) {
  const std::string k = "\"" + key + "\":";
  size_t i = line.find(k);
  if (i == std::string::npos) return false;
  i += k.size();
  if (i < line.size() && line[i] == '"') {
    const size_t e = line.find('"', i + 1);
    if (e == std::string::npos) return false;
    *val = line.substr(i + 1, e - i - 1);
    return true;
  }
  const size_t e = line.find_first_of(",}", i);
  if (e == std::string::npos) return false;
  *val = line.substr(i, e - i);
  return true;
}
}  // namespace

std::vector<TraceRec> read_trace(const std::string& path, std::string* err) {
  std::vector<TraceRec> out;
  std::ifstream in(path);
  if (!in) {
    *err = "cannot open trace " + path;
    return out;
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    TraceRec r;
    std::string v[11];
    const char* keys[11] = {"job",        "rank",         "comm",       "seq",     "func",      "bytes",
                            "enqueue_ns", "gpu_start_ns", "gpu_end_ns", "gated_ns", "edge_bytes"};
    for (int i = 0; i < 11; ++i)
      if (!find_raw(line, keys[i], &v[i])) {
        *err = path + ":" + std::to_string(n) + ": no key " + keys[i] + " in " + line;
        return out;
      }
    if (line.front() != '{' || line.back() != '}') {
      *err = path + ":" + std::to_string(n) + ": not one JSON object per line";
      return out;
    }
    r.job = v[0];
    r.rank = std::stoi(v[1]);
    r.comm = v[2];
    r.seq = std::stoull(v[3]);
    r.func = v[4];
    r.bytes = std::stoull(v[5]);
    r.enqueue_ns = std::stoull(v[6]);
    r.gpu_start_ns = std::stoull(v[7]);
    r.gpu_end_ns = std::stoull(v[8]);
    r.gated_ns = std::stoull(v[9]);
    r.edge_bytes = std::stoull(v[10]);
    out.push_back(r);
  }
  return out;
}

std::string hex_comm(uint64_t id) {
  char b[32];
  snprintf(b, sizeof b, "0x%016" PRIx64, id);
  return b;
}

}  // namespace ncclsim
