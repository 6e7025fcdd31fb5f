// harmonics as a Policy (what harmonics-sim runs): one local scheduler per leaf
// switch and the global coordinator, with last epoch's decisions as the warm
// start. The reported scheduling time is the cluster's wall time with leaves
// in parallel: per round the slowest leaf, plus the coordinator's own work.
#include "policy/global_coordinator.h"
#include "policy/harmonics_local.h"
#include "policy/policy.h"

namespace harmonics {
namespace {

class HarmonicsPolicy : public Policy {
public:
    HarmonicsPolicy(const PolicyOptions& opts, const LocalTuning& tuning, const std::string& name)
        : local_(opts, tuning), name_(name), groups_on_(opts.phase_groups) {
        conflicts_.free_hold_s = kConflictFreeHoldEpochs * opts.epoch_s;
        if (groups_on_) coordinator_.use_phase_groups(phase_group_options(opts, tuning));
    }
    std::string name() const override { return name_; }

    Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s, EpochReason) override {
        // Departed jobs leave the warm start.
        std::map<JobId, JobDecision> previous;
        for (const JobProfile& j : jobs) {
            auto p = previous_.find(j.id);
            if (p != previous_.end()) previous.insert(*p);
        }
        CoordinationResult r = coordinator_.plan(topo, jobs, previous, local_, now_s, &conflicts_);
        previous_ = r.jobs;
        if (r.grouped > most_grouped_.grouped) most_grouped_ = {r.families, r.grouped, r.overloaded};
        refused_ += r.refused;
        Decisions d;
        d.jobs = std::move(r.jobs);
        d.sched_time_s = r.slowest_leaf_s + r.coordinator_s;
        return d;
    }

    // The phase families of the run (harmonics-sim's solver line): the epoch
    // with the most jobs in families, and how many jobs refused families held.
    std::vector<std::pair<std::string, double>> solver_figures() const override {
        if (!groups_on_) return {};
        return {{"phase_families", most_grouped_.families},
                {"grouped_jobs", most_grouped_.grouped},
                {"overloaded_members", most_grouped_.overloaded},
                {"refused_jobs", refused_}};
    }

private:
    LocalScheduler local_;
    std::string name_;
    bool groups_on_;
    GlobalCoordinator coordinator_;
    std::map<JobId, JobDecision> previous_;
    ConflictMemory conflicts_;
    struct {
        int families = 0, grouped = 0, overloaded = 0;
    } most_grouped_;
    long refused_ = 0;
};

}  // namespace

PhaseGroupOptions phase_group_options(const PolicyOptions& opts, const LocalTuning& tuning) {
    PhaseGroupOptions g;
    g.slot_s = opts.slot_s;
    g.period_step_s = opts.slot_s / 10;
    g.guard = tuning.guard;
    g.max_stretch = tuning.max_stretch;
    g.overload_stretch = 2 * tuning.max_stretch;   // MaxStretch=1 (none) stays none
    g.keep_tolerance = tuning.keep_tolerance;
    g.charge_waits = tuning.charge_waits;
    g.seed = opts.seed;
    return g;
}

LocalTuning local_tuning(const PolicyOptions& opts) {
    LocalTuning t;
    t.max_stretch = opts.max_stretch;
    t.wide_stretch = 2 * opts.max_stretch;   // MaxStretch=1 (none): no wide plan either
    t.guard = opts.guard;
    t.horizon_s = opts.drift_horizon_s;
    t.free_outrunning = opts.free_outrunning;
    t.charge_waits = opts.charge_waits;
    return t;
}

std::unique_ptr<Policy> make_harmonics_policy(const PolicyOptions& opts, const LocalTuning& tuning,
                                              const std::string& name) {
    return std::make_unique<HarmonicsPolicy>(opts, tuning, name);
}

}  // namespace harmonics
