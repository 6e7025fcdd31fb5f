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
}  // namespace

Scenario generate_scenario(const GeneratorParams& p) {
    if (p.racks < 1 || p.nodes_per_rack < 1) throw std::invalid_argument("--racks and --nodes-per-rack must be >= 1");
    if (p.jobs < 1) throw std::invalid_argument("--jobs must be >= 1");
    if (!(p.arrival_rate > 0)) throw std::invalid_argument("--arrival-rate must be > 0");
    if (!(p.oversubscription >= 1)) throw std::invalid_argument("--oversubscription must be >= 1");
    const auto& models = model_library();
    if (models.empty()) throw std::invalid_argument("the model library is empty");

    Scenario s;
    s.name = "generated";
    s.description = std::to_string(p.racks * p.nodes_per_rack) + " nodes in " + std::to_string(p.racks) +
                    " racks, " + std::to_string(p.jobs) + " jobs, seed " + std::to_string(p.seed);
    s.topo = Topology::make_two_level(p.racks, p.nodes_per_rack, p.node_Bps, p.oversubscription);
    s.duration_s = p.duration_s;
    Random rng(p.seed);
    const int total = p.racks * p.nodes_per_rack;
    double t = 0;
    for (int i = 0; i < p.jobs; ++i) {
        JobSpec spec;
        spec.id = i + 1;
        spec.arrival_s = t;
        t += rng.exponential(p.arrival_rate);
        spec.model = models[rng.below(models.size())].name;
        spec.nodes = draw_size(rng, std::max(1, total / 4));
        spec.gpus_per_node = 8;
        double runtime = rng.uniform(p.min_runtime_s, p.max_runtime_s);
        double iter = estimate_iteration_s(spec, p.node_Bps);
        spec.iterations = std::max(1L, static_cast<long>(std::llround(runtime / std::max(iter, 1e-3))));
        s.specs.push_back(spec);
    }
    return s;
}

}  // namespace sim
}  // namespace harmonics
