// The large-cluster workload generator.
#include "sim/generator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/model_library.h"
#include "sim/placement_plan.h"
#include "sim/random.h"

namespace harmonics {
namespace sim {

namespace {
// Job sizes in nodes and their weights: most jobs are small, a few span
// several racks (as in published GPU-cluster traces).
const int kSizes[] = {1, 2, 4, 8, 16, 32};
const double kSizeWeights[] = {0.15, 0.25, 0.25, 0.2, 0.1, 0.05};

int draw_size(Random& rng, int max_nodes) {
    double u = rng.uniform(), acc = 0;
    int size = kSizes[0];
    for (std::size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
        acc += kSizeWeights[i];
        size = kSizes[i];
        if (u < acc) break;
    }
    return std::max(1, std::min(size, max_nodes));
}

// The busy regime's sizes (busy_cluster_sizes()).
int draw_busy_size(Random& rng, int max_nodes) {
    double u = rng.uniform(), acc = 0;
    int size = 2;
    for (const auto& [n, w] : busy_cluster_sizes()) {
        acc += w;
        size = n;
        if (u < acc) break;
    }
    return std::max(1, std::min(size, max_nodes));
}

// A model name drawn uniformly from p.models, or from the library when empty.
std::string draw_model(Random& rng, const GeneratorParams& p) {
    if (!p.models.empty()) return p.models[rng.below(p.models.size())];
    const auto& models = model_library();
    return models[rng.below(models.size())].name;
}

JobSpec draw_job(Random& rng, int id, int nodes, const GeneratorParams& p) {
    JobSpec spec;
    spec.id = id;
    spec.model = draw_model(rng, p);
    spec.nodes = nodes;
    spec.gpus_per_node = 8;
    double runtime = rng.uniform(p.min_runtime_s, p.max_runtime_s);
    double iter = estimate_iteration_s(spec, p.node_Bps);
    spec.iterations = std::max(1L, static_cast<long>(std::llround(runtime / std::max(iter, 1e-3))));
    return spec;
}

// Jobs behind the head of the queue that backfill may start (Slurm's
// bf_max_job_test is larger; a short window keeps the history cheap).
constexpr int kBackfillWindow = 16;

// A past job of the history: its nodes and when it leaves.
struct Held {
    std::vector<NodeId> nodes;
    double end_s;
};

// Runs the history before time 0 and returns the placements of the jobs
// still running at its end, in the order they were placed.
std::vector<std::vector<NodeId>> busy_snapshot(const Topology& topo, const GeneratorParams& p,
                                               const std::vector<NodeId>& order, Random& rng) {
    const int total = static_cast<int>(topo.nodes().size());
    const int cap = std::max(1, total / 4);
    const int target = std::max(1, static_cast<int>(std::floor(p.utilisation * total + 1e-9)));
    double mean = 0;
    for (const auto& [n, w] : busy_cluster_sizes()) mean += w * std::min(n, cap);
    const long departures_wanted = std::max(1L, std::lround(p.history_rounds * target / mean));

    std::vector<bool> is_free(topo.nodes().size(), true);
    std::vector<Held> live;
    int used = 0;
    long departed = 0;
    double t = 0;
    // The queue as Slurm's sched/backfill serves it: the head starts when
    // enough nodes are free under the target (anywhere: topology/tree then
    // spreads it over the fewest leaves); while it waits, a later job in the
    // window starts if it fits now and does not delay the head (EASY
    // backfill: it ends before the head's reserved start, or fits in the
    // nodes the head will leave over). No job is dropped, so the running
    // jobs keep the drawn size mix up to how long each runs.
    struct Queued {
        int size;
        double life;
    };
    std::vector<Queued> queue;
    auto refill = [&] {
        while (static_cast<int>(queue.size()) < kBackfillWindow)
            queue.push_back({draw_busy_size(rng, cap), rng.uniform(p.min_runtime_s, p.max_runtime_s)});
    };
    auto start = [&](std::size_t k) {
        std::vector<NodeId> nodes = place_by_rule(p.placement, topo, is_free, queue[k].size, order);
        for (NodeId n : nodes) is_free[n] = false;
        used += queue[k].size;
        live.push_back({nodes, t + queue[k].life});
        queue.erase(queue.begin() + static_cast<long>(k));
        refill();
    };
    refill();
    for (;;) {
        if (used + queue[0].size <= target) {
            start(0);
            continue;
        }
        // The head's reservation: when departures leave room for it, and the
        // nodes it leaves over then.
        std::vector<const Held*> by_end;
        for (const Held& h : live) by_end.push_back(&h);
        std::sort(by_end.begin(), by_end.end(), [](const Held* a, const Held* b) { return a->end_s < b->end_s; });
        int after = used;
        double shadow_s = t;
        for (const Held* h : by_end) {
            if (after + queue[0].size <= target) break;
            after -= static_cast<int>(h->nodes.size());
            shadow_s = h->end_s;
        }
        int extra = target - after - queue[0].size;
        bool backfilled = false;
        for (std::size_t k = 1; k < queue.size(); ++k) {
            const Queued& q = queue[k];
            if (used + q.size > target) continue;
            bool before_head = t + q.life <= shadow_s;
            if (!before_head && q.size > extra) continue;
            if (!before_head) extra -= q.size;
            start(k);
            backfilled = true;
            break;
        }
        if (backfilled) continue;
        // Nothing starts now: stop once the history is long enough, else
        // time moves to the next departure.
        if (departed >= departures_wanted || live.empty()) break;
        auto first = std::min_element(live.begin(), live.end(),
                                      [](const Held& a, const Held& b) { return a.end_s < b.end_s; });
        t = first->end_s;
        for (NodeId n : first->nodes) is_free[n] = true;
        used -= static_cast<int>(first->nodes.size());
        live.erase(first);
        ++departed;
    }
    std::vector<std::vector<NodeId>> out;
    for (Held& h : live) out.push_back(std::move(h.nodes));
    return out;
}

}  // namespace

const std::vector<std::pair<int, double>>& busy_cluster_sizes() {
    static const std::vector<std::pair<int, double>> sizes = {
        {1, 0.15}, {2, 0.20}, {3, 0.10}, {4, 0.15}, {6, 0.10},
        {8, 0.10}, {12, 0.07}, {16, 0.06}, {24, 0.04}, {32, 0.03}};
    return sizes;
}

Scenario generate_scenario(const GeneratorParams& p) {
    if (p.racks < 1 || p.nodes_per_rack < 1) throw std::invalid_argument("--racks and --nodes-per-rack must be >= 1");
    if (p.jobs < (p.utilisation > 0 ? 0 : 1))
        throw std::invalid_argument(p.utilisation > 0 ? "--jobs must be >= 0" : "--jobs must be >= 1");
    if (!(p.arrival_rate > 0)) throw std::invalid_argument("--arrival-rate must be > 0");
    if (!(p.oversubscription >= 1)) throw std::invalid_argument("--oversubscription must be >= 1");
    if (!(p.utilisation >= 0 && p.utilisation <= 1)) throw std::invalid_argument("--utilisation must be in [0, 1]");
    if (!(p.min_runtime_s > 0 && p.max_runtime_s >= p.min_runtime_s))
        throw std::invalid_argument("--min-runtime must be > 0 and <= --max-runtime");
    if (p.history_rounds < 0) throw std::invalid_argument("history_rounds must be >= 0");
    if (model_library().empty()) throw std::invalid_argument("the model library is empty");
    for (const std::string& m : p.models)
        if (!find_model(m)) throw std::invalid_argument("--models: unknown model '" + m + "' (--list shows them)");

    Scenario s;
    s.name = "generated";
    s.topo = Topology::make_two_level(p.racks, p.nodes_per_rack, p.node_Bps, p.oversubscription);
    s.duration_s = p.duration_s;
    s.placement = p.placement;
    // Its own stream, so the jobs drawn for a seed do not depend on the rule.
    if (p.placement == PlacementRule::Scattered) s.node_order = scattered_node_order(s.topo, p.seed ^ 0x5ca77e7du);
    Random rng(p.seed);
    const int total = p.racks * p.nodes_per_rack;
    int id = 0;
    if (p.utilisation > 0) {
        for (std::vector<NodeId>& nodes : busy_snapshot(s.topo, p, s.node_order, rng)) {
            JobSpec spec = draw_job(rng, ++id, static_cast<int>(nodes.size()), p);
            spec.arrival_s = 0;
            spec.placement = std::move(nodes);
            s.specs.push_back(spec);
        }
    }
    const int running = id;
    double t = 0;
    for (int i = 0; i < p.jobs; ++i) {
        if (p.utilisation > 0) {
            // Churn on a busy cluster: the first arrival comes after time 0.
            t += rng.exponential(p.arrival_rate);
            JobSpec spec = draw_job(rng, ++id, draw_busy_size(rng, std::max(1, total / 4)), p);
            spec.arrival_s = t;
            s.specs.push_back(spec);
            continue;
        }
        // The original draw order, kept so old seeds give the same jobs.
        JobSpec spec;
        spec.id = ++id;
        spec.arrival_s = t;
        t += rng.exponential(p.arrival_rate);
        spec.model = draw_model(rng, p);
        spec.nodes = draw_size(rng, std::max(1, total / 4));
        spec.gpus_per_node = 8;
        double runtime = rng.uniform(p.min_runtime_s, p.max_runtime_s);
        double iter = estimate_iteration_s(spec, p.node_Bps);
        spec.iterations = std::max(1L, static_cast<long>(std::llround(runtime / std::max(iter, 1e-3))));
        s.specs.push_back(spec);
    }
    s.description = std::to_string(total) + " nodes in " + std::to_string(p.racks) + " racks, ";
    if (p.utilisation > 0)
        s.description += std::to_string(running) + " jobs running at " +
                         std::to_string(static_cast<int>(std::lround(p.utilisation * 100))) + "% utilisation, " +
                         std::to_string(p.jobs) + " arriving";
    else
        s.description += std::to_string(p.jobs) + " jobs";
    if (p.placement != PlacementRule::RackAware)
        s.description += std::string(", ") + placement_rule_name(p.placement) + " placement";
    for (size_t i = 0; i < p.models.size(); ++i) s.description += (i ? "," : ", models ") + p.models[i];
    s.description += ", seed " + std::to_string(p.seed);
    return s;
}

}  // namespace sim
}  // namespace harmonics
