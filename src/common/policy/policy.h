// The interface every scheduling policy implements. A policy sees the active
// jobs (their profiles and the links they load) and returns, per job, a shift,
// a period and an origin (the job's first collective of iteration k may start
// no earlier than origin + shift + k·period), or a priority class. Policies do
// no I/O: the simulator and the daemons feed them and carry out the decisions.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {

struct JobDecision {
    bool gated = false;        // false: the job runs free
    double shift_s = 0;
    double period_s = 0;       // scheduled period P_j >= T_j
    double origin_s = 0;       // absolute time the slot grid starts from
    int priority = 0;          // 0 = highest; used when uses_priorities()
    SwitchId owner_leaf = -1;  // harmonics: the leaf that decides this job
    // How late the job's first collective may start and still go at once:
    // its bursts then still end before another job's on its links. < 0: not
    // known (a plan without one), kDefaultLateTolerance of the period.
    double late_s = -1;
    // harmonics: >= 0 when the Global Coordinator placed the job in window
    // `group` of `groups` around a period its phase family shares
    // (phase_groups.h); such a job is fixed on every leaf it crosses.
    int group = -1;
    int groups = 0;
    // harmonics: the share of its slack the job's collisions may take under
    // the plan that gates it (the owner's rule when it took the plan); every
    // leaf's and the coordinator's checks of the job use the same. <= 0: not
    // given, the default (LocalTuning::slack_margin).
    double slack_margin = -1;
};

// The same gate, field by field within a nanosecond (what the daemons compare
// before pushing or recording a decision; harmonics_local.h's same_schedule
// also takes equal phases as equal).
inline bool same_gate(const JobDecision& a, const JobDecision& b) {
    return a.gated == b.gated && std::fabs(a.shift_s - b.shift_s) < 1e-9 && std::fabs(a.period_s - b.period_s) < 1e-9 &&
           std::fabs(a.origin_s - b.origin_s) < 1e-9 && std::fabs(a.late_s - b.late_s) < 1e-9;
}

enum class EpochReason { Epoch, Arrival, Departure };

struct Decisions {
    std::map<JobId, JobDecision> jobs;
    // Wall time of the decision for the whole cluster, with per-leaf work that
    // runs in parallel counted as the slowest leaf.
    double sched_time_s = 0;
};

struct PolicyOptions {
    double time_limit_s = 10;        // optimal: solver time limit
    double slot_s = 0.001;           // slot grid resolution
    double change_threshold = 0.02;  // harmonics: min predicted gain to reshuffle
    double local_budget_s = 0.001;   // harmonics: per-leaf search budget
    // harmonics: > 0 counts that budget in search work, this many slot loads
    // per second, instead of wall time: the same decisions on a busy host as
    // on an idle one (harmonics-sim). 0: wall clock (the daemons).
    double search_work_per_s = 0;
    double max_stretch = 0.05;       // harmonics: a period may exceed T_j by this fraction
    double guard = 0.01;             // harmonics: slack of a period over T_j and between packed bursts
    double drift_horizon_s = 1.0;    // harmonics: how far ahead drift plans are judged (DriftHorizon=)
    double epoch_s = 1.0;            // decision round (harmonics counts conflict holds in epochs)
    bool phase_groups = true;        // harmonics: the coordinator's phase families (PhaseGroups=)
    bool free_outrunning = true;     // harmonics: gated jobs past their period run free (FreeOutrunning=)
    bool charge_waits = true;        // harmonics: plans pay their first slots' waits (ChargeWaits=)
    unsigned seed = 1;
};

class Policy {
public:
    virtual ~Policy() = default;
    virtual std::string name() const = 0;
    // True when links serve jobs by strict priority class (crux).
    virtual bool uses_priorities() const { return false; }
    virtual Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                             EpochReason why) = 0;
    // How the run's decisions were reached, as (name, value) pairs for the
    // simulator's report: optimal says how many solves hit its time limit
    // and their largest gap. Empty for policies without a solver to judge.
    virtual std::vector<std::pair<std::string, double>> solver_figures() const { return {}; }
};

// Every policy by name: fair, harmonics, cassini, crux, optimal. Returns null
// for an unknown name.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& opts);
std::vector<std::string> policy_names();

}  // namespace harmonics
