// bench-harmonics: how long harmonics' decisions take.
//   leaf:    one local scheduler deciding 32 jobs that all cross its uplink
//            (cold: no previous schedule; warm: last decision as the start):
//            "models" two-node jobs of library models (an overloaded uplink),
//            "packable" short bursts that fit side by side (a real search)
//   cluster: one epoch of the whole two-tier policy on generated clusters
//            with every job active at once, against the other policies'
//            decision time on the same jobs
// Usage: bench-harmonics [--leaf-jobs N] [--repeat N] [--sizes 128,1024,8192] [--policies harmonics,cassini]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_library.h"
#include "model/traffic.h"
#include "policy/harmonics_local.h"
#include "policy/policy.h"
#include "sim/generator.h"
#include "sim/scenario.h"

using namespace harmonics;

namespace {

// CPU time of this thread: on a shared machine, what an idle core would take.
double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// `n` two-node jobs, each with one rank on rack 1 and one elsewhere, so every
// ring crosses rack 1's uplink and downlink.
std::vector<JobProfile> leaf_jobs(const Topology& topo, int n, unsigned seed) {
    const char* models[] = {"resnet50", "resnet101", "vgg16", "bert-base", "bert-large", "vit-b16", "transformer-big"};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, 6);
    std::vector<SwitchId> leaves = topo.leaves();
    std::vector<JobProfile> jobs;
    for (int i = 0; i < n; ++i) {
        JobSpec spec;
        spec.id = i + 1;
        spec.model = models[pick(rng)];
        spec.nodes = 2;
        NodeId a = topo.sw(leaves[0]).nodes[i];
        NodeId b = topo.sw(leaves[1 + i % (leaves.size() - 1)]).nodes[i / (leaves.size() - 1)];
        jobs.push_back(make_profile(topo, spec, *find_model(spec.model), {a, b}));
    }
    return jobs;
}

// `n` jobs whose bursts each take half the uplink for 6 ms of a 100 ms
// period: 32 of them fit two at a time (96 % of the link); free-running,
// three or more meet often, so the leaf searches for real (greedy + local
// search beyond 8 jobs).
std::vector<JobProfile> packable_jobs(const Topology& topo, int n) {
    const Switch& leaf = topo.sw(topo.leaves()[0]);
    std::vector<JobProfile> jobs;
    for (int i = 0; i < n; ++i) {
        JobProfile j;
        j.id = i + 1;
        j.isolated_period_s = 0.100;
        j.compute_s = j.isolated_period_s - 0.006;
        CommPhase ph;
        ph.start_offset_s = j.compute_s;
        ph.alone_s = 0.006;
        ph.bytes_per_edge = 0.5 * topo.link(leaf.up).capacity_Bps * ph.alone_s;
        ph.links = {{leaf.up, 1.0}, {leaf.down, 1.0}};
        j.phases.push_back(ph);
        jobs.push_back(j);
    }
    return jobs;
}

void bench_leaf(int n, int repeat, bool packable) {
    Topology topo = Topology::make_two_level(9, std::max(n, 8), 12.5e9, 3.0);
    std::vector<JobProfile> jobs = packable ? packable_jobs(topo, n) : leaf_jobs(topo, n, 7);
    LocalScheduler local(PolicyOptions{});
    LeafProblem pb;
    pb.leaf = topo.leaves()[0];
    pb.jobs = jobs;
    std::vector<double> cold, warm, cold_cpu, warm_cpu;
    LeafResult last;
    for (int r = 0; r < repeat; ++r) {
        pb.previous.clear();
        double c0 = thread_cpu_s();
        last = local.decide(topo, pb);
        cold_cpu.push_back(thread_cpu_s() - c0);
        cold.push_back(last.wall_s);
    }
    pb.previous = last.jobs;
    for (int r = 0; r < repeat; ++r) {
        double c0 = thread_cpu_s();
        warm.push_back(local.decide(topo, pb).wall_s);
        warm_cpu.push_back(thread_cpu_s() - c0);
    }
    std::printf("leaf kind=%s jobs=%d cold_median_ms=%.3f cold_cpu_median_ms=%.3f cold_max_ms=%.3f warm_median_ms=%.3f "
                "warm_cpu_median_ms=%.3f warm_max_ms=%.3f gated=%zu free=%d predicted_cost=%.4f\n",
                packable ? "packable" : "models", n, median(cold) * 1e3, median(cold_cpu) * 1e3, *std::max_element(cold.begin(), cold.end()) * 1e3,
                median(warm) * 1e3, median(warm_cpu) * 1e3, *std::max_element(warm.begin(), warm.end()) * 1e3,
                last.jobs.size() - last.free_jobs, last.free_jobs, last.predicted_cost);
}

void bench_cluster(int nodes, const std::vector<std::string>& policies) {
    sim::GeneratorParams gp;
    gp.nodes_per_rack = 8;
    gp.racks = nodes / gp.nodes_per_rack;
    gp.jobs = nodes / 6;  // about a full cluster at the generator's job sizes
    gp.seed = 1;
    sim::Scenario sc = sim::generate_scenario(gp);
    std::vector<sim::SimJob> placed = sim::prepare_jobs(sc);
    std::vector<JobProfile> jobs;
    for (const sim::SimJob& j : placed) jobs.push_back(j.profile);
    for (const std::string& name : policies) {
        PolicyOptions opts;
        std::unique_ptr<Policy> p = make_policy(name, opts);
        if (!p) continue;
        double t0 = thread_cpu_s();
        Decisions first = p->decide(sc.topo, jobs, 0, EpochReason::Arrival);
        double cpu1 = thread_cpu_s() - t0;
        t0 = thread_cpu_s();
        Decisions again = p->decide(sc.topo, jobs, 1, EpochReason::Epoch);
        double cpu2 = thread_cpu_s() - t0;
        size_t gated = 0;
        for (const auto& [id, d] : again.jobs) gated += d.gated;
        std::printf("cluster nodes=%d leaves=%d jobs=%zu policy=%s first_sched_ms=%.3f epoch_sched_ms=%.3f "
                    "first_cpu_ms=%.3f epoch_cpu_ms=%.3f gated=%zu\n",
                    nodes, gp.racks, jobs.size(), name.c_str(), first.sched_time_s * 1e3, again.sched_time_s * 1e3,
                    cpu1 * 1e3, cpu2 * 1e3, gated);
        std::fflush(stdout);
    }
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, ',')) out.push_back(x);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int leaf_n = 32, repeat = 20;
    std::vector<std::string> sizes = {"128", "1024", "8192"}, policies = {"harmonics", "cassini"};
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--leaf-jobs") leaf_n = std::atoi(argv[i + 1]);
        else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
        else if (a == "--sizes") sizes = split(argv[i + 1]);
        else if (a == "--policies") policies = split(argv[i + 1]);
        else {
            std::fprintf(stderr, "bench-harmonics: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (leaf_n > 0) {
        bench_leaf(leaf_n, std::max(1, repeat), false);
        bench_leaf(leaf_n, std::max(1, repeat), true);
    }
    for (const std::string& s : sizes) bench_cluster(std::atoi(s.c_str()), policies);
    return 0;
}
