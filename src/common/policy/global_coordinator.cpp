// Harmonics' Global Coordinator: owners for cross-leaf jobs and the bounded
// rounds in which owners' decisions reach the other leaves. Everything it
// keeps or hands over is per job (owner, shift, period).
#include "policy/global_coordinator.h"

#include <chrono>
#include <unordered_map>

#include "policy/coordination_epoch.h"
#include "policy/leaf_loads.h"

namespace harmonics {

std::map<JobId, SwitchId> GlobalCoordinator::assign_owners(const Topology& topo,
                                                           const std::vector<JobProfile>& jobs) const {
    const auto leaf_of = leaf_of_links(topo);
    const std::vector<LeafLoad> loads = leaf_loads(topo, jobs, leaf_of);
    std::unordered_map<SwitchId, double> contention;
    for (const LeafLoad& l : loads)
        for (const auto& [leaf, x] : l.per_leaf) contention[leaf] += x;
    std::map<JobId, SwitchId> owners;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (loads[i].per_leaf.size() < 2) continue;
        SwitchId best = -1;
        double most = -1;
        for (const auto& [leaf, x] : loads[i].per_leaf) {  // leaves in ascending id order
            (void)x;
            if (contention[leaf] > most + 1e-12) {
                most = contention[leaf];
                best = leaf;
            }
        }
        owners[jobs[i].id] = best;
    }
    return owners;
}

namespace {

// Owners as first assigned, for the jobs `first` knows; the others' join it.
// Recomputed every epoch, an owner moved whenever an arrival or a departure
// changed which of a job's leaves was the most contended, and the new owner
// planned the job afresh: a new shift, and a wait of up to a period at the
// gate for its first slot (a gpt3-6.7b over 8 leaves waited 3.5 s so).
void keep_first_owners(std::map<JobId, SwitchId>& owners, std::map<JobId, SwitchId>& first) {
    std::map<JobId, SwitchId> kept;
    for (auto& [id, leaf] : owners) {
        auto f = first.find(id);
        if (f != first.end()) leaf = f->second;
        kept[id] = leaf;
    }
    first.swap(kept);
}

}  // namespace

CoordinationResult GlobalCoordinator::plan(const Topology& topo, const std::vector<JobProfile>& jobs,
                                           const std::map<JobId, JobDecision>& previous, const LocalScheduler& local,
                                           double now_s, ConflictMemory* memory) const {
    const auto t0 = std::chrono::steady_clock::now();
    std::map<JobId, SwitchId> owners = assign_owners(topo, jobs);
    if (memory) keep_first_owners(owners, memory->assigned);
    CoordinationEpoch epoch(topo, jobs, previous, local, now_s, max_rounds_, std::move(owners));
    if (memory) epoch.recall(*memory);
    if (memory && local.tuning().free_outrunning) epoch.free_outrunning(*memory);
    if (use_groups_) epoch.group_phases(groups_, memory);
    epoch.decide();
    for (int pass = 0; pass < max_rounds_; ++pass) {
        const bool last = pass + 1 == max_rounds_;
        const bool resolved = epoch.resolve_conflicts(memory, last);
        const bool adopted = !last && epoch.adopt_free_jobs(memory);
        if (!resolved && !adopted) break;
    }
    return epoch.finish(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace harmonics
