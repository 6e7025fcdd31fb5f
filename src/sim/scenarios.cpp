// The built-in scenarios and the step from job specs to placed, profiled jobs.
#include "sim/scenario.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/model_library.h"
#include "model/traffic.h"
#include "sim/generator.h"
#include "sim/placement_plan.h"
#include "sim/random.h"

namespace harmonics {
namespace sim {

namespace {

constexpr double kNic100G = 12.5e9;  // bytes/s

JobSpec job(JobId id, const std::string& model, long iterations, const Topology& topo,
            const std::vector<std::string>& nodes) {
    JobSpec s;
    s.id = id;
    s.model = model;
    s.iterations = iterations;
    s.nodes = static_cast<int>(nodes.size());
    s.gpus_per_node = 8;
    for (const std::string& n : nodes) s.placement.push_back(topo.find_node(n));
    return s;
}

// The testbed: 24 servers in 3 racks of 8, 100 Gb/s NICs, uplinks 3:1
// oversubscribed (267 Gb/s, 2.7 NICs' worth). Nine jobs; six cross racks, so
// every uplink carries five rings while it has room for fewer than three at
// NIC speed: their all-reduces collide unless they take turns.
Scenario testbed() {
    Scenario s;
    s.name = "default";
    s.description = "testbed: 24 servers in 3 racks, 100 Gb/s NICs, uplinks 3:1 oversubscribed, 9 jobs";
    s.topo = Topology::make_two_level(3, 8, kNic100G, 3.0);
    const Topology& t = s.topo;
    s.specs = {
        job(1, "vgg16", 120, t, {"n1", "n9", "n17"}),
        job(2, "resnet50", 600, t, {"n2", "n10", "n18"}),
        job(3, "bert-large", 80, t, {"n3", "n4", "n11", "n12", "n19", "n20"}),
        job(4, "gpt2-xl", 20, t, {"n5", "n13"}),
        job(5, "vgg19", 100, t, {"n14", "n21"}),
        job(6, "resnet101", 400, t, {"n6", "n22"}),
        job(7, "bert-base", 400, t, {"n7", "n8"}),
        job(8, "roberta-large", 120, t, {"n15", "n16"}),
        job(9, "dlrm", 60, t, {"n23", "n24"}),
    };
    return s;
}

// Two identical jobs whose rings share one uplink of one NIC's capacity: fair
// sharing halves their rate while both communicate.
Scenario collide2() {
    Scenario s;
    s.name = "collide2";
    s.description = "two identical jobs sharing one rack uplink of one NIC's capacity";
    s.topo = Topology::make_two_level(2, 2, kNic100G, 2.0);
    s.specs = {job(1, "vgg16", 100, s.topo, {"n1", "n3"}), job(2, "vgg16", 100, s.topo, {"n2", "n4"})};
    return s;
}

// The papers' testbed (Cassini, Harmonics): 24 servers in 3 racks of 8,
// 200 Gb/s NICs, uplinks 4:1 oversubscribed (400 Gb/s, two NICs' worth).
// Five jobs whose rings cross all three racks: every uplink carries five
// rings at half its capacity each, so while all communicate demand is 2.5x
// capacity, yet on average the uplinks are loaded well below 1 (the
// contention-free bound is 1.0). Collisions come from timing alone, which is
// what time shifting fixes; the default testbed is saturated instead.
Scenario testbed_paper() {
    Scenario s;
    s.name = "testbed-paper";
    s.description = "papers' testbed: 24 servers in 3 racks, 200 Gb/s NICs, uplinks 4:1, 5 cross-rack jobs";
    s.topo = Topology::make_two_level(3, 8, 2 * kNic100G, 4.0);
    const Topology& t = s.topo;
    s.specs = {
        job(1, "vgg16", 150, t, {"n1", "n9", "n17"}),
        job(2, "vgg16", 150, t, {"n2", "n10", "n18"}),
        job(3, "vgg16", 150, t, {"n3", "n11", "n19"}),
        job(4, "bert-large", 100, t, {"n4", "n12", "n20"}),
        job(5, "bert-large", 100, t, {"n5", "n13", "n21"}),
    };
    return s;
}

// The benchmark: one hour of a 1,024-node, 128-rack cluster with 300 jobs.
Scenario bench() {
    GeneratorParams p;
    p.racks = 128;
    p.nodes_per_rack = 8;
    p.jobs = 300;
    p.arrival_rate = 1.0;  // all arrive within minutes: a full, fragmented cluster
    p.duration_s = 3600;
    p.seed = 1;
    Scenario s = generate_scenario(p);
    s.name = "bench";
    s.description = "benchmark: " + s.description + ", one hour";
    return s;
}

}  // namespace

std::vector<std::string> scenario_names() { return {"default", "collide2", "bench", "testbed-paper"}; }

Scenario builtin_scenario(const std::string& name) {
    if (name == "default" || name == "testbed") return testbed();
    if (name == "collide2") return collide2();
    if (name == "bench") return bench();
    if (name == "testbed-paper") return testbed_paper();
    std::string known;
    for (const std::string& n : scenario_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown scenario '" + name + "' (known: " + known + ")");
}

std::vector<SimJob> prepare_jobs(Scenario& scenario) {
    for (const JobSpec& s : scenario.specs)
        if (!find_model(s.model))
            throw std::runtime_error("job " + std::to_string(s.id) + ": unknown model '" + s.model + "'");
    plan_placements(scenario.topo, scenario.specs, scenario.placement, scenario.node_order);
    std::vector<SimJob> jobs;
    jobs.reserve(scenario.specs.size());
    for (const JobSpec& s : scenario.specs) {
        SimJob j;
        j.id = s.id;
        j.model = s.model;
        j.arrival_s = s.arrival_s;
        j.iterations = s.iterations;
        j.profile = make_profile(scenario.topo, s, *find_model(s.model), s.placement);
        jobs.push_back(std::move(j));
    }
    return jobs;
}

int mark_measuring(std::vector<SimJob>& jobs, double share, unsigned seed) {
    if (!(share >= 0 && share <= 1)) throw std::invalid_argument("the measuring share must be in [0, 1]");
    std::vector<std::size_t> order(jobs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // A stream of its own: the scenario's draws are the same with or without it.
    Random rng(0x6d656173ULL ^ seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const std::size_t n = static_cast<std::size_t>(std::lround(share * static_cast<double>(jobs.size())));
    for (std::size_t k = 0; k < n; ++k) jobs[order[k]].profile.holds = false;
    return static_cast<int>(n);
}

void mark_measuring_jobs(std::vector<SimJob>& jobs, const std::vector<JobId>& ids) {
    for (JobId id : ids) {
        auto j = std::find_if(jobs.begin(), jobs.end(), [id](const SimJob& s) { return s.id == id; });
        if (j == jobs.end()) throw std::invalid_argument("measuring job " + std::to_string(id) + ": no such job");
        j->profile.holds = false;
    }
}

int spread_start_phases(std::vector<SimJob>& jobs, const Topology& topo, unsigned seed) {
    Random rng(0x70686173ULL ^ seed);
    int moved = 0;
    for (SimJob& j : jobs) {
        if (j.arrival_s != 0) continue;
        j.arrival_s = rng.uniform(0, isolated_iteration_s(j.profile, topo));
        ++moved;
    }
    return moved;
}

int spread_paces(std::vector<SimJob>& jobs, double spread, unsigned seed) {
    if (!(spread >= 0 && spread < 0.5)) throw std::invalid_argument("the pace spread must be in [0, 0.5)");
    if (spread == 0) return 0;
    Random rng(0x70616365ULL ^ seed);
    for (SimJob& j : jobs) {
        const double x = rng.uniform(1 - spread, 1 + spread);
        JobProfile& p = j.profile;
        p.compute_s *= x;
        p.isolated_period_s *= x;
        for (CommPhase& c : p.phases) {
            c.start_offset_s *= x;
            c.bytes_per_edge *= x;
            c.alone_s *= x;
        }
    }
    return static_cast<int>(jobs.size());
}

bool parse_start_phases(const std::string& name) {
    if (name != "aligned" && name != "random")
        throw std::invalid_argument("--start-phases: '" + name + "' is neither aligned nor random");
    return name == "random";
}

void trace_window(const Scenario& scenario, const std::vector<SimJob>& jobs, double* from_s, double* to_s) {
    if (scenario.trace_to_s > scenario.trace_from_s) {
        *from_s = scenario.trace_from_s;
        *to_s = scenario.trace_to_s;
        return;
    }
    double last_arrival = 0;
    std::vector<double> periods;
    for (const SimJob& j : jobs) {
        last_arrival = std::max(last_arrival, j.arrival_s);
        periods.push_back(isolated_iteration_s(j.profile, scenario.topo));
    }
    std::sort(periods.begin(), periods.end());
    double median = periods.empty() ? 0.1 : periods[periods.size() / 2];
    // Late enough that the policy has decided, short enough that single
    // collectives are visible: a few periods of the median job.
    *from_s = last_arrival + 2 * scenario.epoch_s;
    *to_s = *from_s + 4 * std::max(median, 0.05);
}

}  // namespace sim
}  // namespace harmonics
