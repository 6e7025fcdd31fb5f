// scripted-schedd: a harmonics-schedd stand-in that speaks the real wire
// protocol (frames + protobuf-c + MUNGE Hello) and follows a script:
//   ok       register, wait for a sane profile report, push a schedule, stay
//   die      like ok, then exit 300 ms after pushing the schedule
//   garbage  answer the Hello, then send bytes that are not a frame, close
//   hang     accept and never answer
// Usage: scripted-schedd MODE PORT_FILE SCHEDULE_FILE JOB_ID DEADLINE_S
// It listens on 127.0.0.1 (ephemeral port, written to PORT_FILE), writes
// "origin_ns shift_ns period_ns" to SCHEDULE_FILE after pushing, and exits 0
// when its script's checks passed (ok/die: register + report + schedule).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "wire/frame.h"
#include "wire/munge_auth.h"

using namespace harmonics::wire;

namespace {

constexpr double kPeriodS = 0.050;
constexpr double kShiftS = 0.007;
// Less than the hook's default (20% of the period): a collective 4-10 ms late
// must wait for its next slot.
constexpr double kLateS = 0.004;

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool send_env(int fd, const Harmonics__Envelope& env) {
  std::vector<std::uint8_t> buf;
  if (!encode_frame(env, buf)) return false;
  size_t off = 0;
  while (off < buf.size()) {
    const ssize_t n = ::send(fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

// Next envelope from fd, waiting until `deadline`; false on EOF/timeout/bad frame.
bool recv_env(int fd, FrameDecoder& dec, EnvelopePtr* env, double deadline) {
  for (;;) {
    const FrameStatus st = dec.next(env);
    if (st == FrameStatus::Ok) return true;
    if (st != FrameStatus::NeedMore) {
      std::fprintf(stderr, "schedd: bad frame from hook: %s\n", frame_status_name(st));
      return false;
    }
    const double left = deadline - now_s();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, int(std::min(left, 0.1) * 1000) + 1) <= 0) continue;
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    dec.feed(buf, size_t(n));
  }
}

struct Result {
  bool hello = false, registered = false, reported = false, scheduled = false;
};

void serve(int fd, const std::string& mode, const std::string& sched_file, int64_t job, double deadline, Result* res) {
  FrameDecoder dec;
  EnvelopePtr env;
  if (mode == "hang") {
    while (now_s() < deadline && recv_env(fd, dec, &env, deadline)) {
    }
    return;
  }
  if (!recv_env(fd, dec, &env, deadline) || env->body_case != HARMONICS__ENVELOPE__BODY_HELLO) {
    std::fprintf(stderr, "schedd: no Hello\n");
    return;
  }
  const Harmonics__Hello& h = *env->hello;
  MungeIdentity id;
  std::string err;
  const bool cred_ok = h.munge_cred != nullptr && munge_decode(std::getenv("HARMONICS_MUNGE_SOCKET") ? std::getenv("HARMONICS_MUNGE_SOCKET") : "", h.munge_cred, &id, &err);
  const bool ok = cred_ok && h.role == HARMONICS__ROLE__ROLE_HOOK && h.proto_version == kProtoVersion &&
                  id.uid == getuid();
  std::fprintf(stderr, "schedd: Hello from '%s' role %d, MUNGE %s uid %u\n", h.name ? h.name : "?", int(h.role),
               cred_ok ? "valid" : err.c_str(), id.uid);
  Harmonics__HelloAck ack = HARMONICS__HELLO_ACK__INIT;
  ack.ok = ok;
  ack.reason = const_cast<char*>(ok ? "" : "bad hello");
  Harmonics__Envelope out = HARMONICS__ENVELOPE__INIT;
  out.body_case = HARMONICS__ENVELOPE__BODY_HELLO_ACK;
  out.hello_ack = &ack;
  if (!send_env(fd, out) || !ok) return;
  res->hello = true;
  if (mode == "garbage") {
    const char junk[] = "GET / HTTP/1.1\r\nthis is not a harmonics frame\r\n\r\n";
    ::send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    return;
  }
  double die_at = 0;
  while (recv_env(fd, dec, &env, die_at ? std::min(deadline, die_at) : deadline)) {
    if (env->body_case == HARMONICS__ENVELOPE__BODY_HOOK_REGISTER) {
      const Harmonics__HookRegister& r = *env->hook_register;
      std::fprintf(stderr, "schedd: register job %" PRId64 " rank %d comm 0x%" PRIx64 " nodes %d ranks %d\n", r.job_id,
                   r.rank, r.has_comm_id ? r.comm_id : 0, r.has_n_nodes ? r.n_nodes : -1, r.has_n_ranks ? r.n_ranks : -1);
      res->registered |= r.job_id == job && r.has_comm_id && r.has_n_nodes && r.n_nodes == 2;
    } else if (env->body_case == HARMONICS__ENVELOPE__BODY_PROFILE_REPORT) {
      const Harmonics__ProfileReport& r = *env->profile_report;
      const char* holds = !r.has_holds ? "absent" : r.holds ? "1" : "0";
      std::fprintf(stderr, "schedd: report job %" PRId64 " rank %d period %.4f s, %zu phases, %" PRIu64
                   " iterations, holds %s\n",
                   r.job_id, r.rank, r.period_s, r.n_phases, r.has_iterations ? r.iterations : 0, holds);
      {  // the last report's word on holding, for the harness (SCHEDULE_FILE.holds)
        std::ofstream f(sched_file + ".holds.tmp");
        f << holds << "\n";
        f.close();
        std::rename((sched_file + ".holds.tmp").c_str(), (sched_file + ".holds").c_str());
      }
      // The harness plays 18 ms of compute and a ~2.5 ms burst of two
      // all-reduces of S = 1 MiB on a communicator of 8 ranks (2 nodes). A
      // phase's bytes are bytes per ring edge: 2 · 2(n-1)/n · S = 2 · 7/4 · S.
      const uint64_t want_bytes = 2 * (2 * 7 * (uint64_t(1) << 20) / 8);
      const bool bytes_ok = r.n_phases == 1 && r.phases[0]->has_bytes && r.phases[0]->bytes == want_bytes;
      if (r.n_phases == 1 && !bytes_ok)
        std::fprintf(stderr, "schedd: phase bytes %" PRIu64 ", want %" PRIu64 " per ring edge\n", r.phases[0]->bytes,
                     want_bytes);
      // phases: the harness plays two bursts of one all-reduce per iteration
      // (40-50 ms) of two sizes.
      const bool two = r.n_phases == 2 && r.phases[0]->has_bytes && r.phases[1]->has_bytes &&
                       r.phases[0]->bytes != r.phases[1]->bytes && r.period_s > 0.035 && r.period_s < 0.060;
      const bool sane = r.job_id == job &&
                        (mode == "phases" ? two
                                          : r.period_s > 0.018 && r.period_s < 0.030 && r.n_phases == 1 &&
                                                r.phases[0]->duration_s > 0.0015 && r.phases[0]->duration_s < 0.006 &&
                                                bytes_ok);
      if (sane && !res->scheduled) {
        res->reported = true;
        Harmonics__Schedule s = HARMONICS__SCHEDULE__INIT;
        s.job_id = job;
        s.gated = 1;
        s.has_shift_s = 1, s.shift_s = kShiftS;
        s.has_period_s = 1, s.period_s = kPeriodS;
        s.has_late_s = 1, s.late_s = kLateS;
        s.has_origin_s = 1, s.origin_s = std::floor(now_s());
        s.has_epoch = 1, s.epoch = 1;
        s.has_valid_until_s = 1, s.valid_until_s = now_s() + 60;
        Harmonics__Envelope e = HARMONICS__ENVELOPE__INIT;
        e.body_case = HARMONICS__ENVELOPE__BODY_SCHEDULE;
        e.schedule = &s;
        if (!send_env(fd, e)) return;
        res->scheduled = true;
        std::ofstream f(sched_file + ".tmp");
        f << uint64_t(s.origin_s) * 1000000000ull << " " << uint64_t(std::llround(kShiftS * 1e9)) << " "
          << uint64_t(std::llround(kPeriodS * 1e9)) << " " << uint64_t(std::llround(kLateS * 1e9)) << "\n";
        f.close();
        std::rename((sched_file + ".tmp").c_str(), sched_file.c_str());
        std::fprintf(stderr, "schedd: pushed schedule origin %.0f shift %.3f period %.3f\n", s.origin_s, kShiftS, kPeriodS);
        if (mode == "die") die_at = now_s() + 0.3;
      }
    }
  }
  if (die_at && now_s() >= die_at) {
    std::fprintf(stderr, "schedd: dying as scripted\n");
    std::exit(res->registered && res->reported && res->scheduled ? 0 : 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s ok|die|phases|garbage|hang PORT_FILE SCHEDULE_FILE JOB_ID DEADLINE_S\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], port_file = argv[2], sched_file = argv[3];
  const bool schedules = mode == "ok" || mode == "die" || mode == "phases";  // modes that push a schedule
  const int64_t job = std::strtoll(argv[4], nullptr, 10);
  const double deadline = now_s() + std::atof(argv[5]);
  const int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (ls < 0 || bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(ls, 8) != 0 ||
      getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("schedd: listen");
    return 2;
  }
  {
    std::ofstream f(port_file + ".tmp");
    f << ntohs(a.sin_port) << "\n";
  }
  std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  Result res;
  int conns = 0;
  while (now_s() < deadline) {
    pollfd p{ls, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int fd = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++conns;
    serve(fd, mode, sched_file, job, deadline, &res);
    ::close(fd);
    if (schedules && res.scheduled) break;  // hook went away after its run
  }
  std::fprintf(stderr, "schedd: %d connection(s); hello %d register %d report %d schedule %d\n", conns, res.hello,
               res.registered, res.reported, res.scheduled);
  if (schedules) return res.hello && res.registered && res.reported && res.scheduled ? 0 : 1;
  if (mode == "garbage") return res.hello && conns >= 2 ? 0 : 1;  // the hook reconnected after the garbage
  return conns >= 1 ? 0 : 1;
}
