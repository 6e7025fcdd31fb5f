// Scripted clients for the daemon system tests: emulated NCCL hooks (register,
// report, collect schedules), Slurm job events, and malformed peers. Output
// is line-oriented so the test scripts can check it with grep/awk.
#include <getopt.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "util/clock.h"
#include "wire/client.h"
#include "wire/munge_auth.h"

using namespace harmonics::wire;

namespace {

struct Opts {
    std::string addr, munge, node = "n1", nodes, state = "start", reason = "COMPLETED";
    std::vector<long long> jobs;
    int ranks = 1, rank_base = 0, nnodes = 1, reports = 1000000, uid = -1, job_uid = 0;
    double period = 0.2, interval = 0.1, duration = 10, phase_off = 0.15, phase_dur = 0.04;
    double phase_bytes = 4e8;
    // From `after` s on, iterations take later_period and the collective
    // later_phase_dur (0: never), as when collisions stretch it.
    double later_period = 0, later_phase_dur = 0, after = 0;
    double clock_skew = 0;   // added to the measured clock offset the hooks report
    bool until_scheduled = false, until_gated = false, print_first = false, history = false;
    bool no_hold = false;    // the hooks say they do not hold their collectives (measuring only)
    // notify: the job's end time this many seconds from now (Slurm's start
    // plus time limit); < 0: none sent.
    double end_in = -1;
    // notify: the sender saw the job's time limit (end_time_known, as
    // prep/harmonics): with no end_in, the job has none.
    bool limit_known = false;
    // hooks: report where the latest iteration started (Unix time), as if
    // the rank had iterated every period since the hooks started.
    bool iteration_start = false;
    Harmonics__Role role = HARMONICS__ROLE__ROLE_HOOK;
};

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<long long> parse_list(const char* s) {
    std::vector<long long> v;
    for (const char* p = s; *p;) {
        char* end = nullptr;
        long long a = std::strtoll(p, &end, 10), b = a;
        if (*end == '-') b = std::strtoll(end + 1, &end, 10);
        for (long long x = a; x <= b; ++x) v.push_back(x);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;
    }
    return v;
}

bool connect_as(Client& c, const Opts& o, Harmonics__Role role, const std::string& name, std::string* err) {
    return c.connect(o.addr, 2000, err) && c.handshake(role, name, o.munge, 2000, err);
}

bool send_env(Client& c, Harmonics__Envelope& env, std::string* err) { return c.send(env, 2000, err); }

// hooks: one connection per (job, rank); report every interval; print the
// last schedule each job received.
int cmd_hooks(const Opts& o) {
    struct Hook {
        Client c;
        long long job;
        int rank;
    };
    std::vector<std::unique_ptr<Hook>> hooks;
    for (long long j : o.jobs)
        for (int r = 0; r < o.ranks; ++r) {
            auto h = std::make_unique<Hook>();
            h->job = j;
            h->rank = o.rank_base + r;
            std::string err;
            if (!connect_as(h->c, o, HARMONICS__ROLE__ROLE_HOOK, "test hook", &err)) {
                std::printf("REFUSED job=%lld rank=%d reason=%s\n", j, h->rank, err.c_str());
                std::fflush(stdout);
                return 3;
            }
            Harmonics__HookRegister reg = HARMONICS__HOOK_REGISTER__INIT;
            reg.job_id = j;
            reg.rank = h->rank;
            reg.node = const_cast<char*>(o.node.c_str());
            reg.has_n_nodes = reg.has_n_ranks = 1;
            reg.n_nodes = o.nnodes;
            reg.n_ranks = o.ranks * o.nnodes;
            Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
            env.body_case = HARMONICS__ENVELOPE__BODY_HOOK_REGISTER;
            env.hook_register = &reg;
            if (!send_env(h->c, env, &err)) {
                std::printf("SENDFAIL job=%lld reason=%s\n", j, err.c_str());
                return 3;
            }
            hooks.push_back(std::move(h));
        }
    std::map<long long, std::string> last;
    std::map<long long, bool> gated;
    double t0 = now_s(), next = t0;
    const double wall_t0 = harmonics::wall_s();
    int sent = 0;
    while (now_s() - t0 < o.duration) {
        if (now_s() >= next && sent < o.reports) {
            for (auto& h : hooks) {
                Harmonics__PhaseReport ph = HARMONICS__PHASE_REPORT__INIT;
                // A little jitter per rank: the schedd must see through it.
                ph.start_offset_s = o.phase_off * (1 + 0.01 * (h->rank % 3));
                const bool later = o.later_period > 0 && now_s() - t0 >= o.after;
                ph.duration_s = later && o.later_phase_dur > 0 ? o.later_phase_dur : o.phase_dur;
                ph.has_bytes = 1;
                ph.bytes = std::uint64_t(o.phase_bytes);
                Harmonics__PhaseReport* phs[] = {&ph};
                Harmonics__ProfileReport r = HARMONICS__PROFILE_REPORT__INIT;
                r.job_id = h->job;
                r.rank = h->rank;
                const double period = later ? o.later_period : o.period;
                r.period_s = period * (1 + 0.002 * (h->rank % 5));
                r.n_phases = 1;
                r.phases = phs;
                r.has_holds = 1;
                r.holds = !o.no_hold;
                if (o.iteration_start) {
                    const double ran = now_s() - t0;
                    r.has_iteration_start_s = 1;
                    r.iteration_start_s = wall_t0 + std::floor(ran / period) * period + o.phase_off + o.clock_skew;
                }
                if (h->c.has_server_offset()) {   // as the NCCL plugin: ours minus the server's
                    r.has_clock_offset_s = 1;
                    r.clock_offset_s = o.clock_skew - h->c.server_offset_s();
                }
                Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
                env.body_case = HARMONICS__ENVELOPE__BODY_PROFILE_REPORT;
                env.profile_report = &r;
                std::string err;
                if (!send_env(h->c, env, &err)) {
                    std::printf("SENDFAIL job=%lld rank=%d reason=%s\n", h->job, h->rank, err.c_str());
                    std::fflush(stdout);
                    return 3;
                }
            }
            sent++;
            next += o.interval;
        }
        for (auto& h : hooks) {
            EnvelopePtr env;
            std::string err;
            while (h->c.poll_recv(&env, &err)) {
                if (env->body_case == HARMONICS__ENVELOPE__BODY_SCHEDULE) {
                    const Harmonics__Schedule& s = *env->schedule;
                    char line[256];
                    std::snprintf(line, sizeof line, "gated=%d shift=%.6f period=%.6f epoch=%llu owner=%s", s.gated,
                                  s.shift_s, s.period_s, (unsigned long long)s.epoch, s.owner_leaf ? s.owner_leaf : "");
                    if (o.print_first && !last.count(s.job_id)) std::printf("FIRST job=%lld %s\n", (long long)s.job_id, line);
                    // Every change of a job's schedule, for per-epoch comparisons,
                    // and when it came (seconds since the hooks started).
                    if (o.history && last[s.job_id] != line)
                        std::printf("SCHED job=%lld %s at=%.3f\n", (long long)s.job_id, line, now_s() - t0);
                    last[s.job_id] = line;
                    gated[s.job_id] = s.gated;
                } else if (env->body_case == HARMONICS__ENVELOPE__BODY_ERROR) {
                    std::printf("REFUSED job=%lld rank=%d reason=%s\n", h->job, h->rank, env->error->reason);
                    std::fflush(stdout);
                    return 3;
                }
            }
            if (!err.empty()) {
                std::printf("CLOSED job=%lld rank=%d reason=%s\n", h->job, h->rank, err.c_str());
                std::fflush(stdout);
                return 3;
            }
        }
        bool done = (o.until_scheduled || o.until_gated) && last.size() == o.jobs.size();
        if (done && o.until_gated)
            for (long long j : o.jobs) done = done && gated[j];
        if (done) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (long long j : o.jobs)
        std::printf("JOB %lld %s\n", j, last.count(j) ? last[j].c_str() : "none");
    return last.size() == o.jobs.size() ? 0 : 1;
}

int cmd_notify(const Opts& o) {
    Client c;
    std::string err;
    if (!connect_as(c, o, HARMONICS__ROLE__ROLE_NOTIFY, "test notify", &err)) {
        std::printf("REFUSED %s\n", err.c_str());
        return 3;
    }
    for (long long j : o.jobs) {
        Harmonics__JobEvent e = HARMONICS__JOB_EVENT__INIT;
        e.job_id = j;
        e.uid = std::uint32_t(o.job_uid);
        e.state = o.state == "end" ? HARMONICS__JOB_STATE__JOB_ENDED : HARMONICS__JOB_STATE__JOB_STARTED;
        e.node_list = const_cast<char*>(o.nodes.c_str());
        e.reason = const_cast<char*>(o.reason.c_str());
        if (o.limit_known) {
            e.has_end_time_known = 1;
            e.end_time_known = 1;
        }
        if (o.end_in >= 0) {
            e.has_end_time_s = 1;
            e.end_time_s = harmonics::wall_s() + o.end_in;
        }
        Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
        env.body_case = HARMONICS__ENVELOPE__BODY_JOB_EVENT;
        env.job_event = &e;
        EnvelopePtr ack;
        if (!c.send(env, 2000, &err) || !c.recv(&ack, 2000, &err)) {
            std::printf("FAIL %s\n", err.c_str());
            return 3;
        }
        if (ack->body_case != HARMONICS__ENVELOPE__BODY_JOB_EVENT_ACK || !ack->job_event_ack->ok) {
            std::printf("NACK job=%lld\n", j);
            return 3;
        }
        std::printf("ACK job=%lld\n", j);
    }
    return 0;
}

// Sends raw bytes on a fresh connection (after a valid hello when `hello`)
// and reports whether the server closed it.
bool raw_closes(const Opts& o, const std::vector<std::uint8_t>& bytes, bool hello) {
    Client c;
    std::string err;
    if (hello ? !connect_as(c, o, o.role, "bad frames", &err) : !c.connect(o.addr, 2000, &err)) {
        std::printf("connect failed: %s\n", err.c_str());
        return false;
    }
    if (::send(c.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) return true;
    // A truncated frame leaves the server waiting for the rest: half-close so
    // it sees the frame cut short, then wait for it to close.
    ::shutdown(c.fd(), SHUT_WR);
    EnvelopePtr env;
    double t0 = now_s();
    while (now_s() - t0 < 3) {
        if (!c.recv(&env, 500, &err)) {
            if (err.find("closed") != std::string::npos || !c.is_open()) return true;
            if (err == "timed out") continue;
            return true;
        }
    }
    return false;
}

int cmd_badframes(const Opts& o) {
    std::vector<std::uint8_t> hdr_ok = {'H', 'X', kProtoVersion, 0};
    struct Case {
        const char* name;
        std::vector<std::uint8_t> bytes;
        bool hello;
    };
    std::vector<Case> cases = {
        {"garbage", {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'}, false},
        {"garbage-after-hello", {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0}, true},
        {"wrong-version", {'H', 'X', std::uint8_t(kProtoVersion + 1), 0, 0, 0, 0, 2, 0x0a, 0x00}, true},
        {"oversized", {'H', 'X', kProtoVersion, 0, 0x7f, 0, 0, 0}, true},
        {"bad-payload", {'H', 'X', kProtoVersion, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff}, true},
        {"truncated", {'H', 'X', kProtoVersion, 0, 0, 0, 1, 0, 1, 2, 3}, true},
        {"no-hello", {'H', 'X', kProtoVersion, 0, 0, 0, 0, 0}, false},
    };
    int closed = 0;
    for (const Case& c : cases) {
        bool ok = raw_closes(o, c.bytes, c.hello);
        std::printf("%s %s\n", c.name, ok ? "closed" : "NOT-CLOSED");
        closed += ok;
    }
    std::printf("closed %d of %zu\n", closed, cases.size());
    return closed == int(cases.size()) ? 0 : 1;
}

// Sends a Hello as `role` with credential `cred` on a fresh connection and
// says whether the server refused it: REFUSED (exit 0) or ACCEPTED (exit 1).
int hello_refused(const Opts& o, Harmonics__Role role, const std::string& cred) {
    Client c;
    std::string err;
    if (!c.connect(o.addr, 2000, &err)) {
        std::printf("connect failed: %s\n", err.c_str());
        return 3;
    }
    Harmonics__Hello h = HARMONICS__HELLO__INIT;
    h.proto_version = kProtoVersion;
    h.role = role;
    h.munge_cred = const_cast<char*>(cred.c_str());
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_HELLO;
    env.hello = &h;
    EnvelopePtr r;
    if (!c.send(env, 2000, &err) || !c.recv(&r, 2000, &err)) {
        std::printf("REFUSED (closed: %s)\n", err.c_str());
        return 0;
    }
    if (r->body_case == HARMONICS__ENVELOPE__BODY_HELLO_ACK && r->hello_ack->ok) {
        std::printf("ACCEPTED\n");
        return 1;
    }
    const char* why = r->body_case == HARMONICS__ENVELOPE__BODY_HELLO_ACK ? r->hello_ack->reason
                      : r->body_case == HARMONICS__ENVELOPE__BODY_ERROR  ? r->error->reason
                                                                          : nullptr;
    std::printf("REFUSED %s\n", why ? why : "");
    return 0;
}

// A hello whose credential is not valid MUNGE.
int cmd_badcred(const Opts& o) {
    return hello_refused(o, HARMONICS__ROLE__ROLE_HOOK, "MUNGE:AwQDAACforgedforgedforged:");
}

// Connects with a role and reports whether the handshake succeeded.
int cmd_hello(const Opts& o, Harmonics__Role role) {
    Client c;
    std::string err;
    if (!connect_as(c, o, role, "test", &err)) {
        std::printf("REFUSED %s\n", err.c_str());
        return 3;
    }
    // The server's clock is ours here (one host): the offset is near zero.
    if (c.has_server_offset())
        std::printf("ACCEPTED offset_s=%.6f\n", c.server_offset_s());
    else
        std::printf("ACCEPTED offset_s=none\n");
    return 0;
}

// A real credential from our munged, but made for another service: the
// server must refuse it as a Hello.
int cmd_badpayload(const Opts& o) {
    std::string err, cred;
    if (!munge_encode(o.munge, "slurm", &cred, &err)) {
        std::printf("setup failed: %s\n", err.c_str());
        return 3;
    }
    return hello_refused(o, HARMONICS__ROLE__ROLE_CTL, cred);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: hx_testclient hooks|notify|badframes|badcred|badpayload|hello-schedd|hello-ctl ADDR [options]\n");
        return 2;
    }
    std::string cmd = argv[1];
    Opts o;
    o.addr = argv[2];
    if (const char* m = std::getenv("HARMONICS_MUNGE_SOCKET")) o.munge = m;
    const option longopts[] = {
        {"jobs", required_argument, nullptr, 'j'},     {"ranks", required_argument, nullptr, 'r'},
        {"rank-base", required_argument, nullptr, 'b'}, {"node", required_argument, nullptr, 'n'},
        {"nnodes", required_argument, nullptr, 'N'},    {"period", required_argument, nullptr, 'p'},
        {"interval", required_argument, nullptr, 'i'},  {"duration", required_argument, nullptr, 'd'},
        {"reports", required_argument, nullptr, 'R'},   {"until-scheduled", no_argument, nullptr, 'S'},
        {"until-gated", no_argument, nullptr, 'G'},     {"as-uid", required_argument, nullptr, 'u'},
        {"job-uid", required_argument, nullptr, 'U'},   {"nodes", required_argument, nullptr, 'l'},
        {"state", required_argument, nullptr, 's'},     {"phase-bytes", required_argument, nullptr, 'B'},
        {"phase-dur", required_argument, nullptr, 'D'}, {"role", required_argument, nullptr, 'o'},
        {"print-first", no_argument, nullptr, 'F'},  {"history", no_argument, nullptr, 'H'},
        {"phase-off", required_argument, nullptr, 'P'},  {"clock-skew", required_argument, nullptr, 'K'},
        {"no-hold", no_argument, nullptr, 'X'},
        {"later-period", required_argument, nullptr, 'L'}, {"after", required_argument, nullptr, 'A'},
        {"later-phase-dur", required_argument, nullptr, 'Q'},
        {"end-in", required_argument, nullptr, 'E'},     {"iteration-start", no_argument, nullptr, 'I'},
        {"limit-known", no_argument, nullptr, 'T'},
        {nullptr, 0, nullptr, 0}};
    int ch;
    optind = 3;
    while ((ch = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
        switch (ch) {
        case 'j': o.jobs = parse_list(optarg); break;
        case 'r': o.ranks = std::atoi(optarg); break;
        case 'b': o.rank_base = std::atoi(optarg); break;
        case 'n': o.node = optarg; break;
        case 'N': o.nnodes = std::atoi(optarg); break;
        case 'p': o.period = std::atof(optarg); break;
        case 'i': o.interval = std::atof(optarg); break;
        case 'd': o.duration = std::atof(optarg); break;
        case 'R': o.reports = std::atoi(optarg); break;
        case 'S': o.until_scheduled = true; break;
        case 'G': o.until_gated = true; break;
        case 'u': o.uid = std::atoi(optarg); break;
        case 'U': o.job_uid = std::atoi(optarg); break;
        case 'l': o.nodes = optarg; break;
        case 's': o.state = optarg; break;
        case 'B': o.phase_bytes = std::atof(optarg); break;
        case 'K': o.clock_skew = std::atof(optarg); break;
        case 'D': o.phase_dur = std::atof(optarg); break;
        case 'P': o.phase_off = std::atof(optarg); break;
        case 'F': o.print_first = true; break;
        case 'H': o.history = true; break;
        case 'X': o.no_hold = true; break;
        case 'L': o.later_period = std::atof(optarg); break;
        case 'A': o.after = std::atof(optarg); break;
        case 'Q': o.later_phase_dur = std::atof(optarg); break;
        case 'E': o.end_in = std::atof(optarg); break;
        case 'I': o.iteration_start = true; break;
        case 'T': o.limit_known = true; break;
        case 'o': o.role = std::string(optarg) == "ctl" ? HARMONICS__ROLE__ROLE_CTL : HARMONICS__ROLE__ROLE_HOOK; break;
        default: return 2;
        }
    }
    if (o.uid >= 0 && setuid(uid_t(o.uid)) != 0) {
        std::perror("setuid");
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (cmd == "hooks") return cmd_hooks(o);
    if (cmd == "notify") return cmd_notify(o);
    if (cmd == "badframes") return cmd_badframes(o);
    if (cmd == "badcred") return cmd_badcred(o);
    if (cmd == "badpayload") return cmd_badpayload(o);
    if (cmd == "hello-schedd") return cmd_hello(o, HARMONICS__ROLE__ROLE_SCHEDD);
    if (cmd == "hello-ctl") return cmd_hello(o, HARMONICS__ROLE__ROLE_CTL);
    std::fprintf(stderr, "unknown command %s\n", cmd.c_str());
    return 2;
}
