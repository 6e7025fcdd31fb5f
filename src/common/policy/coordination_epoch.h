// One epoch of the Global Coordinator (global_coordinator.h): the leaves'
// rounds, the conflict passes, and the decisions they leave. Internal to
// GlobalCoordinator::plan; state lives for one call, except what the
// ConflictMemory carries to the next epoch.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "policy/global_coordinator.h"
#include "policy/leaf_loads.h"
#include "policy/phase_groups.h"

namespace harmonics {

class CoordinationEpoch {
public:
    CoordinationEpoch(const Topology& topo, const std::vector<JobProfile>& jobs,
                      const std::map<JobId, JobDecision>& previous, const LocalScheduler& local, double now_s,
                      int max_rounds, std::map<JobId, SwitchId> owners);

    // Earlier epochs' conflict outcomes: moved owners, jobs still held free.
    void recall(ConflictMemory& memory);
    // Gated jobs that have iterated past their period long enough under one
    // decision (policy/outrun.h) run free for a conflict hold, phase-family
    // members excepted.
    void free_outrunning(ConflictMemory& memory);
    // Phase groups (phase_groups.h): the cross-leaf jobs the coordinator
    // places itself, fixed on every leaf they cross; the owners decide the rest.
    void group_phases(const PhaseGroupOptions& opts, ConflictMemory* memory);
    // Rounds of leaf decisions from every leaf until no owner's decision moves.
    void decide() { rounds(all_leaves()); }
    // Conflicts on leaves that own neither job (doc/policies.md): true when
    // some were found and acted on (owner moved or job run free), after which
    // the affected leaves have decided again. On the last pass every job
    // still past its slack runs free.
    bool resolve_conflicts(ConflictMemory* memory, bool last_pass);
    // Free cross-leaf jobs that push a leaf's gated jobs past their slack
    // there: one per such leaf is handed to it, to be planned among them.
    // True when some were, after which the affected leaves have decided again.
    bool adopt_free_jobs(ConflictMemory* memory);
    // The decisions, owners and accounting of the epoch.
    CoordinationResult finish(double total_s);

private:
    std::set<SwitchId> all_leaves() const;
    std::set<SwitchId> leaves_of(const std::set<JobId>& ids, bool with_owner) const;
    void rounds(std::set<SwitchId> dirty);
    LeafProblem problem(SwitchId leaf) const;
    LeafProblem gated_only(SwitchId leaf, bool* crossing = nullptr) const;
    double load_on(size_t i, SwitchId leaf) const;
    SwitchId decider(size_t i) const;
    double slack_used(const JobProfile& job, double delay_s) const;
    JobId guest_on(SwitchId leaf, JobId victim) const;
    bool owner_sees_all(SwitchId leaf, SwitchId owner) const;
    void run_free(JobId id, ConflictMemory* memory);
    void ungate(JobId id, SwitchId owner_leaf);

    const Topology& topo_;
    const std::vector<JobProfile>& jobs_;
    const LocalScheduler& local_;
    const double now_s_;
    const int max_rounds_;
    std::vector<LeafLoad> loads_;
    std::map<SwitchId, std::vector<size_t>> members_;   // leaf -> jobs loading its links
    CoordinationResult res_;
    // Latest decision of every job: last epoch's, then each round's. For
    // cross-leaf jobs this is what the coordinator hands to the other leaves.
    std::map<JobId, JobDecision> current_;
    std::set<JobId> ungated_;   // jobs every leaf, the owner included, runs free (cross-leaf, or not holding)
    std::set<JobId> reowned_;   // cross-leaf jobs handed to the leaf where they collided
    std::set<JobId> adopted_;   // ... or, free, to a leaf whose gated jobs they harmed: guests there
    std::set<JobId> grouped_;   // cross-leaf jobs in a phase family: the coordinator's, fixed everywhere
    std::map<SwitchId, LeafResult> results_;
    double leaf_total_s_ = 0;
};

}  // namespace harmonics
