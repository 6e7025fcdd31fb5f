// The simulator's benchmark: one hour of a 1,024-node, 128-rack cluster with
// 300 jobs under the fair policy. Prints wall time, peak resident memory and
// the engine's work counters; doc/benchmarks.md records the figures.
//   usage: bench-sim [--policy NAME] [--scenario NAME]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "policy/policy.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/scenario.h"

using namespace harmonics;
using namespace harmonics::sim;

int main(int argc, char** argv) {
    std::string policy_name = "fair", scenario_name = "bench";
    for (int i = 1; i < argc; i += 2) {
        const bool help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
        if (!help && i + 1 < argc && std::strcmp(argv[i], "--policy") == 0) policy_name = argv[i + 1];
        else if (!help && i + 1 < argc && std::strcmp(argv[i], "--scenario") == 0) scenario_name = argv[i + 1];
        else {   // --help, an unknown option, or one without its value
            std::fprintf(help ? stdout : stderr, "usage: bench-sim [--policy NAME] [--scenario NAME]\n");
            return help ? 0 : 2;
        }
    }
    try {
        auto t0 = std::chrono::steady_clock::now();
        Scenario sc = builtin_scenario(scenario_name);
        std::vector<SimJob> jobs = prepare_jobs(sc);
        auto t1 = std::chrono::steady_clock::now();
        std::unique_ptr<Policy> policy = make_policy(policy_name, PolicyOptions{});
        if (!policy) {
            std::fprintf(stderr, "bench-sim: unknown policy '%s'\n", policy_name.c_str());
            return 2;
        }
        EngineConfig ec;
        ec.epoch_s = sc.epoch_s;
        ec.end_s = sc.duration_s;
        RunResult r = simulate(sc.topo, jobs, policy.get(), ec);
        auto t2 = std::chrono::steady_clock::now();
        Summary s = summarize(r);
        struct rusage ru {};
        getrusage(RUSAGE_SELF, &ru);
        long iterations = 0;
        for (const JobResult& j : r.jobs) iterations += j.iterations_done;
        std::printf("scenario        %s\n", sc.description.c_str());
        std::printf("policy          %s\n", policy_name.c_str());
        std::printf("simulated       %.0f s, %zu jobs, %ld iterations\n", r.end_s, jobs.size(), iterations);
        std::printf("events          %ld\n", r.events);
        std::printf("rate changes    %ld of a lone flow, %ld max-min solves (mean %.1f flows each)\n",
                    r.lone_flows, r.solver_calls,
                    r.solver_calls ? static_cast<double>(r.solver_flows) / static_cast<double>(r.solver_calls) : 0.0);
        std::printf("mean slowdown   %.3f (p99 %.3f)\n", s.mean_slowdown, s.p99_slowdown);
        std::printf("decision rounds %zu, %.3f ms each (policy's own time)\n", r.sched_time_s.size(),
                    s.sched_ms_per_epoch);
        std::printf("setup wall      %.2f s\n", std::chrono::duration<double>(t1 - t0).count());
        std::printf("simulate wall   %.2f s\n", std::chrono::duration<double>(t2 - t1).count());
        std::printf("CPU time        %.2f s user, %.2f s system\n",
                    static_cast<double>(ru.ru_utime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_utime.tv_usec),
                    static_cast<double>(ru.ru_stime.tv_sec) + 1e-6 * static_cast<double>(ru.ru_stime.tv_usec));
        std::printf("peak RSS        %.1f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench-sim: %s\n", e.what());
        return 1;
    }
    return 0;
}
