// The exported ncclProfiler_v5 table. Every entry point catches everything:
// an internal failure costs one log line and the plugin degrades to measuring
// or doing nothing; after init NCCL only ever sees success.
#include <pthread.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "clock.h"
#include "log.h"
#include "profiler_v5.h"
#include "state.h"
#include "model/collective_bytes.h"

namespace hnccl {

namespace {

constexpr int kActivationMask = int(kEvCollApi | kEvColl | kEvProxyOp | kEvProxyStep | kEvKernelCh);

Plugin* g_plugin = nullptr;
std::mutex g_create_mu;
std::atomic<Plugin*> g_ready{nullptr};

unsigned long long ull(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

void refresh_pid() {
  if (Plugin* p = g_ready.load(std::memory_order_acquire)) p->pid.store(getpid(), std::memory_order_relaxed);
}

Plugin* create() {
  auto* p = new Plugin();
  p->pid.store(getpid(), std::memory_order_relaxed);
  pthread_atfork(nullptr, nullptr, refresh_pid);
  std::vector<std::string> warnings;
  p->cfg = read_config(&warnings);
  for (const std::string& w : warnings) log_line(true, "%s", w.c_str());
  if (!p->cfg.job_id.empty()) {
    char* end = nullptr;
    const long long j = std::strtoll(p->cfg.job_id.c_str(), &end, 10);
    if (end != nullptr && *end == '\0' && j > 0) p->job_num = j;
    else log_line(true, "SLURM_JOB_ID=%s is not a job number: measuring only", p->cfg.job_id.c_str());
  }
  p->drain_thread = std::thread(drain_main, p);
  // Reports go to schedd even when this node does not gate (Gate=no):
  // the measurements are what its decisions rest on.
  if (p->job_num > 0 && !p->cfg.schedd_host.empty()) p->link_thread = std::thread(link_main, p);
  log_line(false, "job %s, gate %s, schedd %s%s%s, trace %s",
           p->cfg.job_id.empty() ? "(none: never gated)" : p->cfg.job_id.c_str(),
           gate_mode_name(p->cfg.gate),
           p->cfg.schedd_host.empty() ? "(none)" : p->cfg.schedd_host.c_str(),
           p->cfg.schedd_host.empty() ? "" : (":" + std::to_string(p->cfg.schedd_port)).c_str(),
           p->cfg.schedd_source.empty() ? "" : (" from " + p->cfg.schedd_source).c_str(),
           p->cfg.trace_path.empty() ? "off" : p->cfg.trace_path.c_str());
  return p;
}

// Bytes per ring edge of one collective of `bytes` (NCCL's count × datatype
// size) over the communicator's nranks: what schedd and the model mean by a
// phase's bytes. A name we do not know counts as a transfer of its buffer.
uint64_t bytes_per_ring_edge(Func f, uint64_t bytes, int nranks) {
  using harmonics::Collective;
  Collective c = Collective::SendRecv;
  switch (f) {
    case kAllReduce: c = Collective::AllReduce; break;
    case kAllGather: c = Collective::AllGather; break;
    case kReduceScatter: c = Collective::ReduceScatter; break;
    case kBroadcast: c = Collective::Broadcast; break;
    case kReduce: c = Collective::Reduce; break;
    default: break;
  }
  const double per_edge = harmonics::ring_edge_bytes(c, harmonics::collective_buffer_bytes(c, double(bytes), nranks), nranks);
  return uint64_t(std::llround(per_edge));
}

// Which gate this communicator gets.
GateMode choose_gate(Plugin& p, Comm& c, int n_nodes) {
  const GateMode want = p.cfg.gate;
  if (want == GateMode::Off || p.job_num == 0) return GateMode::Off;
  if (n_nodes <= 1) return GateMode::Off;  // intra-node traffic never crosses a leaf uplink
  if (want == GateMode::Host) return GateMode::Host;
  std::string why;
  if (cuda_gate_prepare(&c.cuda, &why)) return GateMode::Cuda;
  if (want == GateMode::Cuda) log_once(Once::Cuda, "cuda gate unavailable (%s): measuring only", why.c_str());
  else log_once(Once::Cuda, "no cuda gate (%s): measuring only", why.c_str());
  return GateMode::Off;
}

// Should this CollApi call (user thread) be held? Only the first collective
// of a burst, and of those only the one that opens an iteration.
bool wants_gate(Plugin& p, Comm& c, uint64_t now, bool captured, Schedule* s) {
  const uint64_t last = c.last_enqueue_ns.exchange(now, std::memory_order_relaxed);
  const GateMode mode = c.gate.load(std::memory_order_relaxed);
  if (mode == GateMode::Off || captured) return false;
  const uint64_t pause = last != 0 && now > last ? now - last : UINT64_MAX;
  if (pause <= p.cfg.burst_gap_ns) return false;
  const uint64_t opening = p.iteration_pause_ns.load(std::memory_order_relaxed);
  if (opening == kNoOpening || pause < opening) return false;
  *s = p.schedule.load();
  return s->valid && s->period_ns != 0;
}

void start_coll_api(Plugin& p, Comm& c, void** h, const ProfEventDescrV5* d) {
  const uint64_t now = now_ns();
  const bool captured = d->collApi.graphCaptured;
  ApiInfo info;
  info.enqueue_ns = now;
  info.graph_captured = captured;
  void* handle = p.api.publish(info);
  *h = handle;
  Schedule s;
  if (!wants_gate(p, c, now, captured, &s)) return;
  if (c.gate.load(std::memory_order_relaxed) == GateMode::Host) {
    uint64_t last_late = c.last_late_ns.load(std::memory_order_relaxed);
    const uint64_t release = next_release(s, now, p.cfg.gate_tolerance_ns, p.gate_cap(s), &last_late,
                                          p.noise_ns.load(std::memory_order_relaxed));
    c.last_late_ns.store(last_late, std::memory_order_relaxed);
    uint64_t held = 0;
    if (release > now) {
      sleep_until_ns(release);
      const uint64_t after = now_ns();
      held = after - now;
      c.last_enqueue_ns.store(after, std::memory_order_relaxed);  // the burst starts now
    }
    p.n.gated_host.fetch_add(1, std::memory_order_relaxed);
    p.api.set_gate(handle, held, -1);
    return;
  }
  const uint32_t slot = decode(handle).gen % HARMONICS_GATE_RESULTS;
  std::string why;
  if (cuda_gate_launch(c.cuda, d->collApi.stream, slot, &why)) {
    p.n.gated_cuda.fetch_add(1, std::memory_order_relaxed);
    p.api.set_gate(handle, 0, int32_t(slot));
  } else {
    log_once(Once::CudaLaunch, "%s: this communicator runs ungated", why.c_str());
    c.gate.store(GateMode::Off, std::memory_order_relaxed);
  }
}

void start_coll(Plugin& p, Comm& c, uint32_t comm_slot, void** h, const ProfEventDescrV5* d) {
  const uint64_t now = now_ns();
  ApiInfo api;
  const bool has_api = p.api.read(d->parentObj, &api);
  if (!has_api && d->parentObj != nullptr) p.n.stale_parent.fetch_add(1, std::memory_order_relaxed);
  uint32_t slot = 0, gen = 0;
  CollRec* r = p.colls.claim(&slot, &gen, 1u + d->coll.nChannels);
  if (r == nullptr) {
    if (p.n.pool_full.fetch_add(1, std::memory_order_relaxed) == 0)
      log_once(Once::PoolFull, "collective pool full: dropping records (counted)");
    return;
  }
  p.n.colls.fetch_add(1, std::memory_order_relaxed);
  // A graph replay fires Coll events long after the captured CollApi: its
  // enqueue time is the replay, and it was never gated.
  const bool replay = has_api && api.graph_captured;
  r->comm_slot.store(comm_slot, std::memory_order_relaxed);
  r->comm_gen.store(c.gen.load(std::memory_order_relaxed), std::memory_order_relaxed);
  r->seq.store(d->coll.seqNumber, std::memory_order_relaxed);
  const Func func = func_from_name(d->coll.func);
  r->func.store(func, std::memory_order_relaxed);
  const uint64_t bytes = uint64_t(d->coll.count) * datatype_size(d->coll.datatype);
  r->bytes.store(bytes, std::memory_order_relaxed);
  r->edge_bytes.store(bytes_per_ring_edge(func, bytes, c.nranks.load(std::memory_order_relaxed)),
                      std::memory_order_relaxed);
  r->enqueue_ns.store(has_api && !replay ? api.enqueue_ns : now, std::memory_order_relaxed);
  r->gated_ns.store(has_api && !replay ? api.gated_ns : 0, std::memory_order_relaxed);
  r->gate_slot.store(has_api && !replay ? api.gate_slot : -1, std::memory_order_relaxed);
  r->created_ns.store(now, std::memory_order_relaxed);
  r->channels.store(d->coll.nChannels, std::memory_order_relaxed);
  *h = encode(Kind::Coll, slot, gen);
}

// Child events (proxy, kernel channel) point at a live Coll record.
CollRec* parent_coll(Plugin& p, const void* parent, Kind want, Handle* out) {
  const Handle ph = decode(parent);
  if (ph.kind != want) return nullptr;
  CollRec* r = p.colls.live(ph.slot, ph.gen);
  if (r == nullptr) p.n.stale_parent.fetch_add(1, std::memory_order_relaxed);
  *out = ph;
  return r;
}

void min_store(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(std::memory_order_relaxed);
  while ((cur == 0 || v < cur) && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void max_store(std::atomic<uint64_t>& a, uint64_t v) {
  uint64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void start_event(Plugin& p, Comm& c, uint32_t comm_slot, void** h, const ProfEventDescrV5* d) {
  Handle ph;
  switch (d->type) {
    case kEvCollApi:
      start_coll_api(p, c, h, d);
      return;
    case kEvColl:
      start_coll(p, c, comm_slot, h, d);
      return;
    case kEvProxyOp:
      if (d->proxyOp.pid != p.pid.load(std::memory_order_relaxed)) {  // PXN: parent in another process
        p.n.foreign.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      if (parent_coll(p, d->parentObj, Kind::Coll, &ph)) *h = encode(Kind::ProxyOp, ph.slot, ph.gen);
      return;
    case kEvProxyStep:
      if (parent_coll(p, d->parentObj, Kind::ProxyOp, &ph)) *h = encode(Kind::ProxyStep, ph.slot, ph.gen);
      return;
    case kEvKernelCh: {
      CollRec* r = parent_coll(p, d->parentObj, Kind::Coll, &ph);
      if (r == nullptr) return;
      const uint64_t pt = d->kernelCh.pTimer;
      if (pt != 0) {
        // One clock sample per collective is plenty for a minimum filter
        // (reading the clock is most of this callback's cost).
        if (d->kernelCh.channelId == 0) p.clock.sample(now_ns(), pt);
        min_store(r->gpu_start, pt);
      }
      *h = encode(Kind::KernelCh, ph.slot, ph.gen);
      return;
    }
    default:
      p.n.ignored.fetch_add(1, std::memory_order_relaxed);
      return;
  }
}

Comm* comm_of(void* ctx, uint32_t* slot) {
  Plugin* p = g_ready.load(std::memory_order_acquire);
  if (p == nullptr || ctx == nullptr) return nullptr;
  Comm* c = static_cast<Comm*>(ctx);
  if (c < p->comms || c >= p->comms + kMaxComms) return nullptr;
  if (!c->live.load(std::memory_order_acquire)) return nullptr;
  *slot = uint32_t(c - p->comms);
  return c;
}

}  // namespace

Plugin& plugin_instance() {
  std::lock_guard<std::mutex> lock(g_create_mu);
  if (g_plugin == nullptr) {
    g_plugin = create();
    g_ready.store(g_plugin, std::memory_order_release);
  }
  return *g_plugin;
}

Plugin* plugin_if_ready() { return g_ready.load(std::memory_order_acquire); }

void finish_record(Plugin& p, uint32_t slot) {
  CollRec& r = p.colls.at(slot);
  const uint32_t cs = r.comm_slot.load(std::memory_order_relaxed);
  Comm& c = p.comms[cs % kMaxComms];
  const uint64_t now = r.created_ns.load(std::memory_order_relaxed);  // picks the offset window
  Completed out;
  out.comm_id = c.comm_id.load(std::memory_order_relaxed);
  out.rank = c.rank.load(std::memory_order_relaxed);
  out.n_nodes = c.n_nodes.load(std::memory_order_relaxed);
  out.seq = r.seq.load(std::memory_order_relaxed);
  out.func = r.func.load(std::memory_order_relaxed);
  out.bytes = r.bytes.load(std::memory_order_relaxed);
  out.edge_bytes = r.edge_bytes.load(std::memory_order_relaxed);
  out.enqueue_ns = r.enqueue_ns.load(std::memory_order_relaxed);
  const uint64_t s = r.gpu_start.load(std::memory_order_relaxed);
  const uint64_t e = r.gpu_end.load(std::memory_order_relaxed);
  out.gpu_start_ns = s ? p.clock.to_host(s, now) : 0;
  out.gpu_end_ns = e ? p.clock.to_host(e, now) : 0;
  out.gated_ns = r.gated_ns.load(std::memory_order_relaxed);
  out.gate_slot = r.gate_slot.load(std::memory_order_relaxed);
  const bool same_comm = c.gen.load(std::memory_order_relaxed) == r.comm_gen.load(std::memory_order_relaxed);
  p.colls.release(slot);
  if (!same_comm) return;  // its communicator was finalized meanwhile
  if (p.done.push(out)) {
    p.n.completed.fetch_add(1, std::memory_order_relaxed);
    p.pushed.fetch_add(1, std::memory_order_release);
  } else if (p.n.queue_full.fetch_add(1, std::memory_order_relaxed) == 0) {
    log_once(Once::QueueFull, "completion queue full: dropping records (counted)");
  }
}

}  // namespace hnccl

using namespace hnccl;

extern "C" {

static int hx_init(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                   int nranks, int rank, ProfLoggerV5 logger) {
  try {
    *ctx = nullptr;
    log_set_logger(logger);
    Plugin& p = plugin_instance();
    std::lock_guard<std::mutex> lock(p.comms_mu);
    for (int i = 0; i < kMaxComms; ++i) {
      Comm& c = p.comms[i];
      if (c.live.load(std::memory_order_relaxed)) continue;
      c.gen.fetch_add(1, std::memory_order_relaxed);
      c.comm_id.store(commId, std::memory_order_relaxed);
      c.rank.store(rank, std::memory_order_relaxed);
      c.nranks.store(nranks, std::memory_order_relaxed);
      c.n_nodes.store(nNodes, std::memory_order_relaxed);
      c.last_enqueue_ns.store(0, std::memory_order_relaxed);
      c.last_late_ns.store(0, std::memory_order_relaxed);
      c.registered.store(false, std::memory_order_relaxed);
      c.gate.store(choose_gate(p, c, nNodes), std::memory_order_relaxed);
      c.live.store(true, std::memory_order_release);
      p.live_comms.fetch_add(1, std::memory_order_acq_rel);
      if (mask != nullptr) *mask = kActivationMask;
      *ctx = &c;
      log_line(false, "comm %s (0x%lx) rank %d/%d on %d nodes: gate %s", commName ? commName : "?",
               static_cast<unsigned long>(commId), rank, nranks, nNodes,
               gate_mode_name(c.gate.load(std::memory_order_relaxed)));
      return 0;
    }
    log_once(Once::Comms, "more than %d live communicators: the others are not profiled", kMaxComms);
    return 0;
  } catch (const std::exception& e) {
    log_once(Once::Internal, "init failed (%s): plugin disabled for this communicator", e.what());
  } catch (...) {
    log_once(Once::Internal, "init failed: plugin disabled for this communicator");
  }
  return 0;
}

static int hx_start_event(void* ctx, void** eHandle, ProfEventDescrV5* d) {
  if (eHandle == nullptr) return 0;
  *eHandle = nullptr;
  try {
    uint32_t slot = 0;
    Comm* c = comm_of(ctx, &slot);
    if (c == nullptr || d == nullptr) return 0;
    start_event(*plugin_if_ready(), *c, slot, eHandle, d);
  } catch (...) {
    *eHandle = nullptr;
    log_once(Once::Internal, "internal error in startEvent: event ignored");
  }
  return 0;
}

static int hx_stop_event(void* eHandle) {
  try {
    Plugin* p = plugin_if_ready();
    if (p == nullptr || eHandle == nullptr) return 0;
    const Handle h = decode(eHandle);
    if (h.kind == Kind::Coll || h.kind == Kind::KernelCh)
      if (p->colls.count_stop(h.slot, h.gen)) finish_record(*p, h.slot);
  } catch (...) {
    log_once(Once::Internal, "internal error in stopEvent");
  }
  return 0;
}

static int hx_record_state(void* eHandle, int state, ProfStateArgsV5* args) {
  try {
    Plugin* p = plugin_if_ready();
    if (p == nullptr || eHandle == nullptr || args == nullptr) return 0;
    const Handle h = decode(eHandle);
    if (h.kind == Kind::KernelCh && state == kStateKernelChStop) {
      CollRec* r = p->colls.live(h.slot, h.gen);
      const uint64_t pt = args->kernelCh.pTimer;
      if (r != nullptr && pt != 0) {
        max_store(r->gpu_end, pt);
        // The stop callback follows its GPU event closely too: another upper
        // bound on the offset for the minimum filter. Start callbacks alone
        // may all come late (a proxy busy with the collective itself), and a
        // minimum over late samples moves with the collectives' durations.
        p->clock.sample(now_ns(), pt);
      }
    } else if (h.kind == Kind::ProxyStep && state == kStateProxyStepSendWait) {
      if (CollRec* r = p->colls.live(h.slot, h.gen))
        r->net_bytes.fetch_add(args->proxyStep.transSize, std::memory_order_relaxed);
    }
  } catch (...) {
    log_once(Once::Internal, "internal error in recordEventState");
  }
  return 0;
}

static int hx_finalize(void* ctx) {
  try {
    uint32_t slot = 0;
    Comm* c = comm_of(ctx, &slot);
    if (c == nullptr) return 0;
    Plugin& p = *plugin_if_ready();
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(p.comms_mu);
      c->live.store(false, std::memory_order_release);
      c->gen.fetch_add(1, std::memory_order_relaxed);  // in-flight records are dropped
      last = p.live_comms.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }
    // Let the trace catch up with what this communicator completed (bounded:
    // the drain thread only writes a local file).
    const uint64_t target = p.pushed.load(std::memory_order_acquire);
    const uint64_t deadline = now_ns() + 1000000000ull;
    while (p.drained.load(std::memory_order_acquire) < target && now_ns() < deadline) usleep(1000);
    if (last) {
      // What the counters saw, then silence: the link thread hangs up and
      // nothing logs through NCCL any more (it may be shutting down).
      const Counters& n = p.n;
      log_line(false,
               "%llu collectives, %llu completed; dropped: %llu pool full, %llu queue full, %llu expired; "
               "%llu stale parents, %llu foreign proxy ops; held %llu (host) %llu (cuda); %llu reports, "
               "%llu schedules, %llu schedd errors",
               ull(n.colls), ull(n.completed), ull(n.pool_full), ull(n.queue_full), ull(n.expired),
               ull(n.stale_parent), ull(n.foreign), ull(n.gated_host), ull(n.gated_cuda), ull(n.reports),
               ull(n.schedules), ull(n.schedd_errors));
      log_silence();
    }
  } catch (...) {
    log_once(Once::Internal, "internal error in finalize");
  }
  return 0;
}

__attribute__((visibility("default"))) ProfilerV5 ncclProfiler_v5 = {
    "harmonics", hx_init, hx_start_event, hx_stop_event, hx_record_state, hx_finalize,
};

}  // extern "C"
