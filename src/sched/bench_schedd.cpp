// Benchmark of harmonics-schedd (prints numbers; not a test): how many hook
// reports one schedd sustains on one core, and how long its epoch decision
// takes, with J jobs x R ranks reporting. The schedd runs in this process on
// its own thread (pinned to --cpu), the load generator on another core. Run
// through testsuite/system/daemons/bench-schedd.sh, which starts munged and
// coordd (coordd makes this leaf the owner of the cross-leaf jobs).
#include <event2/event.h>
#include <event2/thread.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "schedd.h"
#include "util/log.h"
#include "wire/client.h"

using namespace harmonics;

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
    sched::ScheddOptions so;
    int jobs = 64, ranks = 8, sched_cpu = 0, load_cpu = 1, job_base = 1000, periods = 1;
    double duration = 5, warmup = 1;
    std::string munge;
    const option longopts[] = {{"config", required_argument, nullptr, 'f'}, {"leaf", required_argument, nullptr, 'l'},
                               {"jobs", required_argument, nullptr, 'j'},   {"ranks", required_argument, nullptr, 'r'},
                               {"duration", required_argument, nullptr, 'd'}, {"cpu", required_argument, nullptr, 'c'},
                               {"load-cpu", required_argument, nullptr, 'C'}, {"job-base", required_argument, nullptr, 'b'},
                               {"periods", required_argument, nullptr, 'p'}, {"help", no_argument, nullptr, 'h'},
                               {nullptr, 0, nullptr, 0}};
    auto usage = [](FILE* f) {
        std::fprintf(f, "usage: harmonics-bench-schedd --config harmonics.conf --leaf NAME [--jobs N (64)] [--ranks N (8)]\n"
                        "                              [--periods N (1)] [--duration S (5)] [--cpu N (0)] [--load-cpu N (1)]\n"
                        "                              [--job-base ID (1000)]   (doc/benchmarks.md)\n");
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
        switch (ch) {
        case 'f': so.config_path = optarg; break;
        case 'l': so.leaf = optarg; break;
        case 'j': jobs = std::atoi(optarg); break;
        case 'r': ranks = std::atoi(optarg); break;
        case 'd': duration = std::atof(optarg); break;
        case 'c': sched_cpu = std::atoi(optarg); break;
        case 'C': load_cpu = std::atoi(optarg); break;
        case 'b': job_base = std::atoi(optarg); break;
        case 'p': periods = std::max(1, std::atoi(optarg)); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (const char* m = std::getenv("HARMONICS_MUNGE_SOCKET")) munge = m;
    log_open("bench-schedd", "", LogLevel::Warning);
    evthread_use_pthreads();
    sched::Schedd d(so);
    std::string err;
    if (!d.start(&err)) {
        std::fprintf(stderr, "bench: %s\n", err.c_str());
        return 1;
    }
    log_set_level(LogLevel::Warning);
    std::string addr = "127.0.0.1:" + std::to_string(d.bound_port());
    std::thread loop([&] {
        pin(sched_cpu);
        d.run();
    });
    pin(load_cpu);

    // One connection per (job, rank), as the NCCL hooks would open.
    std::vector<std::unique_ptr<wire::Client>> cs;
    std::vector<std::pair<int, int>> who;
    for (int j = 0; j < jobs; ++j)
        for (int r = 0; r < ranks; ++r) {
            auto c = std::make_unique<wire::Client>();
            if (!c->connect(addr, 2000, &err) || !c->handshake(HARMONICS__ROLE__ROLE_HOOK, "bench", munge, 2000, &err)) {
                std::fprintf(stderr, "bench: hook %d/%d: %s\n", j, r, err.c_str());
                return 1;
            }
            Harmonics__HookRegister reg = HARMONICS__HOOK_REGISTER__INIT;
            reg.job_id = job_base + j;
            reg.rank = r;
            std::string node = "n" + std::to_string(1 + (j * 4 + r % 4) % 32);
            reg.node = const_cast<char*>(node.c_str());
            reg.has_n_nodes = 1;
            reg.n_nodes = ranks;
            Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
            env.body_case = HARMONICS__ENVELOPE__BODY_HOOK_REGISTER;
            env.hook_register = &reg;
            c->send(env, 2000, &err);
            cs.push_back(std::move(c));
            who.push_back({job_base + j, r});
        }

    std::uint64_t sent = 0, schedules = 0;
    double t_start = now_s(), t_measure = t_start + warmup, t_end = t_measure + duration;
    std::uint64_t r0 = 0;
    bool measuring = false;
    std::size_t decisions_before = 0;
    while (now_s() < t_end) {
        if (!measuring && now_s() >= t_measure) {
            measuring = true;
            r0 = d.reports();
            sent = 0;
        }
        for (std::size_t i = 0; i < cs.size(); ++i) {
            Harmonics__PhaseReport ph = HARMONICS__PHASE_REPORT__INIT;
            ph.start_offset_s = 0.15 + 0.001 * double(who[i].first % 20);
            ph.duration_s = 0.012;
            ph.has_bytes = 1;
            ph.bytes = 150000000;
            Harmonics__PhaseReport* phs[] = {&ph};
            Harmonics__ProfileReport rep = HARMONICS__PROFILE_REPORT__INIT;
            rep.job_id = who[i].first;
            rep.rank = who[i].second;
            // `periods` distinct iteration periods among the jobs (200, 210, ... ms).
            rep.period_s = 0.2 + 0.01 * double(who[i].first % periods);
            rep.n_phases = 1;
            rep.phases = phs;
            Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
            env.body_case = HARMONICS__ENVELOPE__BODY_PROFILE_REPORT;
            env.profile_report = &rep;
            if (cs[i]->send(env, 1000, &err)) sent++;
            wire::EnvelopePtr in;
            while (cs[i]->poll_recv(&in, &err)) schedules++;
        }
    }
    double window = now_s() - t_measure;
    std::uint64_t got = d.reports() - r0;
    event_base_loopexit(d.base(), nullptr);
    loop.join();
    std::vector<double> under_load = d.decide_times(), under_load_cpu = d.decide_cpu_times();
    std::vector<double> policy = d.policy_times();
    decisions_before = under_load.size();
    std::vector<double> quiet, quiet_cpu;
    for (int i = 0; i < 300; ++i) d.decide_now();
    quiet.assign(d.decide_times().end() - 300, d.decide_times().end());
    quiet_cpu.assign(d.decide_cpu_times().end() - 300, d.decide_cpu_times().end());

    std::printf("schedd benchmark: %d jobs x %d ranks = %zu hook connections, %d distinct periods; schedd thread on "
                "CPU %d, load on CPU %d\n",
                jobs, ranks, cs.size(), periods, sched_cpu, load_cpu);
    std::printf("reports processed: %llu in %.2f s = %.0f reports/s (offered %.0f reports/s, %llu schedules received)\n",
                (unsigned long long)got, window, double(got) / window, double(sent) / window,
                (unsigned long long)schedules);
    std::printf("epoch decisions under load: n=%zu p50=%.3f ms p99=%.3f ms max=%.3f ms\n", decisions_before,
                pct(under_load, 0.5) * 1e3, pct(under_load, 0.99) * 1e3,
                under_load.empty() ? 0 : *std::max_element(under_load.begin(), under_load.end()) * 1e3);
    std::printf("  same, CPU time of the schedd thread: p50=%.3f ms p99=%.3f ms\n", pct(under_load_cpu, 0.5) * 1e3,
                pct(under_load_cpu, 0.99) * 1e3);
    std::printf("  of which the Local Scheduler (wall): p50=%.3f ms p99=%.3f ms\n", pct(policy, 0.5) * 1e3,
                pct(policy, 0.99) * 1e3);
    std::printf("decisions on a quiet schedd: n=%zu p50=%.3f ms p99=%.3f ms (CPU p50=%.3f ms p99=%.3f ms)\n",
                quiet.size(), pct(quiet, 0.5) * 1e3, pct(quiet, 0.99) * 1e3, pct(quiet_cpu, 0.5) * 1e3,
                pct(quiet_cpu, 0.99) * 1e3);
    return 0;
}
