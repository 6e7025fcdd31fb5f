// The link thread: the only code that talks to harmonics-schedd. It connects
// (MUNGE-authenticated Hello), registers every live communicator, sends the
// measured rhythm every report interval and applies the schedules it gets.
// NCCL's threads never wait for it: they read the schedule lock-free. Without
// a schedd (down, unreachable, talking garbage) the job runs ungated once
// the timeout has passed, and the thread retries with exponential backoff.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "clock.h"
#include "log.h"
#include "schedd_address.h"
#include "state.h"
#include "wire/client.h"

namespace hnccl {

namespace {

using harmonics::wire::Client;
using harmonics::wire::EnvelopePtr;

constexpr int kIoTimeoutMs = 1000;
constexpr int kRecvSliceMs = 20;
constexpr uint64_t kBackoffMinNs = 100000000ull;    // 100 ms
constexpr uint64_t kBackoffMaxNs = 10000000000ull;  // 10 s

double to_s(uint64_t ns) { return double(ns) * 1e-9; }
uint64_t to_ns(double s) { return s <= 0 || !std::isfinite(s) ? 0 : uint64_t(std::llround(s * 1e9)); }


bool send_register(Plugin& p, Client& cl, Comm& c, std::string* err) {
  Harmonics__HookRegister reg = HARMONICS__HOOK_REGISTER__INIT;
  const std::string node = node_name();
  reg.job_id = p.job_num;
  reg.rank = c.rank.load(std::memory_order_relaxed);
  reg.node = const_cast<char*>(node.c_str());
  reg.has_comm_id = 1;
  reg.comm_id = c.comm_id.load(std::memory_order_relaxed);
  reg.has_n_nodes = 1;
  reg.n_nodes = c.n_nodes.load(std::memory_order_relaxed);
  reg.has_n_ranks = 1;
  reg.n_ranks = c.nranks.load(std::memory_order_relaxed);
  Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
  env.body_case = HARMONICS__ENVELOPE__BODY_HOOK_REGISTER;
  env.hook_register = &reg;
  return cl.send(env, kIoTimeoutMs, err);
}

// Register communicators that appeared since the last pass; the report goes
// out for the first live multi-node communicator (the one that is gated).
bool register_new(Plugin& p, Client& cl, Comm** primary, std::string* err) {
  *primary = nullptr;
  for (Comm& c : p.comms) {
    if (!c.live.load(std::memory_order_acquire)) continue;
    if (*primary == nullptr || (c.n_nodes.load() > 1 && (*primary)->n_nodes.load() <= 1)) *primary = &c;
    if (c.registered.load(std::memory_order_relaxed)) continue;
    if (!send_register(p, cl, c, err)) return false;
    c.registered.store(true, std::memory_order_relaxed);
  }
  return true;
}

bool send_report(Plugin& p, Client& cl, const Comm& c, std::string* err) {
  Rhythm r;
  {
    std::lock_guard<std::mutex> lock(p.rhythm_mu);
    r = p.rhythm;
  }
  if (!r.valid) return true;  // nothing learnt yet
  std::vector<Harmonics__PhaseReport> phases(r.phases.size());
  std::vector<Harmonics__PhaseReport*> ptrs;
  for (size_t i = 0; i < r.phases.size(); ++i) {
    Harmonics__PhaseReport ph = HARMONICS__PHASE_REPORT__INIT;
    ph.start_offset_s = to_s(r.phases[i].offset_ns);
    ph.duration_s = to_s(r.phases[i].duration_ns);
    ph.has_bytes = 1;
    ph.bytes = r.phases[i].bytes;
    ph.has_held_s = 1;
    ph.held_s = to_s(r.phases[i].held_ns);
    phases[i] = ph;
    ptrs.push_back(&phases[i]);
  }
  Harmonics__ProfileReport rep = HARMONICS__PROFILE_REPORT__INIT;
  rep.job_id = p.job_num;
  rep.rank = c.rank.load(std::memory_order_relaxed);
  rep.has_comm_id = 1;
  rep.comm_id = c.comm_id.load(std::memory_order_relaxed);
  rep.period_s = to_s(r.period_ns);
  rep.n_phases = ptrs.size();
  rep.phases = ptrs.data();
  rep.has_sent_at_s = 1;
  rep.sent_at_s = to_s(now_ns());
  rep.has_iterations = 1;
  rep.iterations = r.iterations;
  rep.has_iteration_start_s = 1;
  rep.iteration_start_s = to_s(r.iteration_start_ns);
  // schedd plans a job that does not hold as running free: a schedule it
  // cannot keep would have its neighbours planned around phases it never takes.
  rep.has_holds = 1;
  rep.holds = c.gate.load(std::memory_order_relaxed) != GateMode::Off &&
              p.iteration_pause_ns.load(std::memory_order_relaxed) != kNoOpening;
  if (cl.has_server_offset()) {  // measured at the hello; the field is ours minus the schedd's
    rep.has_clock_offset_s = 1;
    rep.clock_offset_s = -cl.server_offset_s();
  }
  Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
  env.body_case = HARMONICS__ENVELOPE__BODY_PROFILE_REPORT;
  env.profile_report = &rep;
  if (!cl.send(env, kIoTimeoutMs, err)) return false;
  p.n.reports.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// A schedule from schedd; false if it is not a sane one for this job.
bool apply_schedule(Plugin& p, const Harmonics__Schedule& m, std::string* err) {
  if (m.job_id != p.job_num) return *err = "schedule for job " + std::to_string(m.job_id), false;
  Schedule s;
  s.valid = m.gated;
  if (m.gated) {
    const uint64_t period = m.has_period_s ? to_ns(m.period_s) : 0;
    const uint64_t origin = m.has_origin_s ? to_ns(m.origin_s) : 0;
    const uint64_t shift = m.has_shift_s ? to_ns(m.shift_s) : 0;
    // Origin 0 is valid: a harmonic plan's slots count from Unix time 0, so
    // every leaf and every job share one grid. A missing origin is not.
    if (period < 100000ull || period > 600000000000ull || !m.has_origin_s)
      return *err = "schedule with period " + std::to_string(m.period_s) + " s / origin " +
                    std::to_string(m.origin_s) + " s out of range",
             false;
    s.period_ns = period;
    s.origin_ns = origin;
    s.shift_ns = shift % period;
    if (m.has_late_s && m.late_s >= 0) s.late_ns = std::min(to_ns(m.late_s), period);
  }
  s.version = m.has_epoch ? m.epoch : 0;
  const uint64_t until = m.has_valid_until_s ? to_ns(m.valid_until_s) : 0;
  p.schedule_valid_until_ns.store(until, std::memory_order_relaxed);
  const Schedule old = p.schedule.load();
  p.schedule.store(s);
  // One line for the first schedule and per change (schedd repeats
  // unchanged schedules every epoch).
  const bool first = p.n.schedules.load(std::memory_order_relaxed) == 0;
  if (first || old.valid != s.valid || old.period_ns != s.period_ns || old.shift_ns != s.shift_ns ||
      old.origin_ns != s.origin_ns || old.late_ns != s.late_ns) {
    if (s.valid)
      log_line(false, "schedule for job %lld: period %.3f ms, shift %.3f ms, origin %.3f s, late %.3f ms (epoch %llu)",
               static_cast<long long>(p.job_num), double(s.period_ns) / 1e6, double(s.shift_ns) / 1e6,
               double(s.origin_ns) / 1e9, double(late_allowance_ns(s)) / 1e6, static_cast<unsigned long long>(s.version));
    else
      log_line(false, "schedule for job %lld: run free", static_cast<long long>(p.job_num));
  }
  p.n.schedules.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void disconnect(Plugin& p, Client& cl) {
  cl.close();
  for (Comm& c : p.comms) c.registered.store(false, std::memory_order_relaxed);
}

}  // namespace

void link_main(Plugin* pp) {
  Plugin& p = *pp;
  const std::string addr = p.cfg.schedd_host.find(':') != std::string::npos
                               ? "[" + p.cfg.schedd_host + "]:" + std::to_string(p.cfg.schedd_port)
                               : p.cfg.schedd_host + ":" + std::to_string(p.cfg.schedd_port);
  const std::string name = node_name() + " job " + p.cfg.job_id;
  Client cl;
  uint64_t backoff = kBackoffMinNs, next_try = 0, next_report = 0;
  uint64_t last_ok = now_ns();  // the timeout counts from start
  bool said_down = false;
  while (!p.stop.load(std::memory_order_relaxed)) {
    try {
      const uint64_t now = now_ns();
      // Lease: ungated once schedd has been silent too long or the schedule expired.
      const uint64_t until = p.schedule_valid_until_ns.load(std::memory_order_relaxed);
      if ((until != 0 && now > until) || now > last_ok + p.cfg.schedd_timeout_ns) {
        if (p.schedule.load().valid) {
          p.schedule.invalidate();
          log_line(true, "no schedule from harmonics-schedd at %s: running ungated", addr.c_str());
        }
      }
      std::string err;
      if (p.live_comms.load(std::memory_order_acquire) == 0) {  // job done (or not begun)
        if (cl.is_open()) disconnect(p, cl);
        usleep(10000);
        continue;
      }
      if (!cl.is_open()) {
        if (now < next_try) {
          usleep(10000);
          continue;
        }
        if (!cl.connect(addr, kIoTimeoutMs, &err) ||
            !cl.handshake(HARMONICS__ROLE__ROLE_HOOK, name, p.cfg.munge_socket, kIoTimeoutMs, &err)) {
          disconnect(p, cl);
          if (!said_down) log_line(true, "harmonics-schedd %s: %s (retrying with backoff)", addr.c_str(), err.c_str());
          said_down = true;
          p.n.schedd_errors.fetch_add(1, std::memory_order_relaxed);
          next_try = now_ns() + backoff;
          backoff = std::min(backoff * 2, kBackoffMaxNs);
          continue;
        }
        if (said_down) log_line(false, "connected to harmonics-schedd %s", addr.c_str());
        said_down = false;
        backoff = kBackoffMinNs;
        last_ok = now_ns();
        next_report = 0;
      }
      Comm* primary = nullptr;
      bool ok = register_new(p, cl, &primary, &err);
      if (ok && primary != nullptr && now >= next_report) {
        ok = send_report(p, cl, *primary, &err);
        next_report = now + p.cfg.report_interval_ns;
      }
      EnvelopePtr env;
      int budget = 64;  // a chatty schedd must not starve reports and the lease check
      while (ok && budget-- > 0 && cl.recv(&env, kRecvSliceMs, &err)) {
        last_ok = now_ns();
        if (env->body_case == HARMONICS__ENVELOPE__BODY_SCHEDULE) {
          std::string why;
          if (!apply_schedule(p, *env->schedule, &why)) {
            log_once(Once::ScheddData, "ignoring a schedule from %s: %s", addr.c_str(), why.c_str());
          }
        } else if (env->body_case == HARMONICS__ENVELOPE__BODY_ERROR) {
          err = std::string("schedd: ") + (env->error->reason ? env->error->reason : "error");
          ok = false;
        }
        env.reset();
      }
      if (ok && !cl.is_open()) ok = false;  // recv closed it (EOF, bad frame)
      if (ok) last_ok = now_ns();
      if (!ok) {
        log_once(Once::Schedd, "lost harmonics-schedd %s: %s (reconnecting)", addr.c_str(), err.c_str());
        p.n.schedd_errors.fetch_add(1, std::memory_order_relaxed);
        disconnect(p, cl);
        next_try = now_ns() + backoff;
        backoff = std::min(backoff * 2, kBackoffMaxNs);
      }
    } catch (...) {
      log_once(Once::Internal, "internal error in the schedd link thread");
      disconnect(p, cl);
      usleep(100000);
    }
  }
}

}  // namespace hnccl
