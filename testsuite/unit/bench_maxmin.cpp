// Benchmark (prints numbers; not a test): max-min rates for 300 flows on the
// 1,024-node, 128-rack fabric of the simulator's benchmark (4:1 oversubscribed
// uplinks), the size of one rate recomputation there.
// Usage: bench_maxmin [calls] [strict 0|1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "model/maxmin.h"
#include "model/traffic.h"

using namespace harmonics;

int main(int argc, char** argv) {
    const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
    const bool strict = argc > 2 && std::atoi(argv[2]) != 0;
    Topology topo = Topology::make_two_level(128, 8, 12.5e9, 4.0);
    std::mt19937 rng(1);
    // 300 jobs of 2-4 nodes on disjoint random nodes (nodes are exclusive, as
    // under Slurm; random placement is the worst case for uplinks: almost
    // every ring crosses racks), ring all-reduce.
    std::vector<NodeId> free_nodes;
    for (NodeId n = 0; n < static_cast<NodeId>(topo.nodes().size()); ++n) free_nodes.push_back(n);
    std::shuffle(free_nodes.begin(), free_nodes.end(), rng);
    std::vector<JobProfile> jobs;
    ModelProfile m;
    m.grad_bytes = 1e8;
    m.compute_s = 0.05;
    std::size_t next = 0;
    for (int j = 0; j < 300; ++j) {
        std::size_t size = std::min<std::size_t>(2 + rng() % 3, free_nodes.size() - next);
        JobSpec s;
        s.id = j;
        jobs.push_back(make_profile(topo, s, m, std::vector<NodeId>(free_nodes.begin() + next,
                                                                    free_nodes.begin() + next + size)));
        next += size;
    }
    std::vector<double> cap;
    for (const Link& l : topo.links()) cap.push_back(l.capacity_Bps);
    std::vector<FlowDemand> flows;
    std::size_t uses = 0;
    for (const JobProfile& p : jobs) {
        flows.push_back(FlowDemand{&p.phases[0].links, static_cast<int>(p.id % 8)});
        uses += p.phases[0].links.size();
    }
    double sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
        // Vary the flow set a little, as the simulator does between events.
        std::swap(flows[static_cast<std::size_t>(i) % flows.size()], flows.back());
        sink += maxmin_rates(cap, flows, strict)[0];
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("links %zu, flows %zu, link uses %zu, strict %d\n", cap.size(), flows.size(), uses, strict ? 1 : 0);
    std::printf("calls %d, total %.3f s, %.2f us per call (checksum %.3g)\n", calls, s, 1e6 * s / calls, sink);
    return 0;
}
