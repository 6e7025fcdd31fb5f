// Harmonics' Local Scheduler: one instance per leaf switch. It takes the jobs
// whose traffic crosses the leaf's uplink/downlink and chooses a shift (and,
// where it pays, a stretched harmonic period) for each job it owns, treating
// the jobs other leaves own as fixed. No I/O: the simulator's harmonics policy
// and harmonics-schedd both call it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/slot_grid.h"
#include "policy/slot_search.h"

namespace harmonics {

struct LeafProblem {
    SwitchId leaf = -1;
    std::vector<JobProfile> jobs;             // every job loading this leaf's uplink/downlink
    std::map<JobId, JobDecision> fixed;       // decided elsewhere (cross-leaf jobs owned by another leaf)
    std::map<JobId, JobDecision> previous;    // last epoch's decisions (warm start)
    double now_s = 0;
};

struct LeafResult {
    std::map<JobId, JobDecision> jobs;        // decisions for the jobs this leaf owns
    double predicted_cost = 0;                // predicted slowdown summed over jobs
    // What the plan was judged by: its stretch, its collisions (counted
    // twice where a job that never holds is in them), its jobs' first waits,
    // less the change threshold where it is last epoch's; running free:
    // its cost, less the threshold where the jobs ran free.
    double judged_cost = 0;
    bool changed = false;                     // false when the previous schedule was kept
    double wall_s = 0;                        // time this decision took
    bool optimal = false;                     // the search proved its shifts optimal
    int free_jobs = 0;                        // owned jobs left ungated (no contention, or no common period)
    std::int64_t search_nodes = 0;
    // Why: each plan's predicted cost and the verdict on it, one line for
    // the daemon's log (e.g. "free 0.231; harmonic 0.050 (stretch 0.010,
    // kept) chosen; drift not searched").
    std::string explain;
};

// Knobs of the local scheduler beyond PolicyOptions, with the defaults the
// evaluation uses.
struct LocalTuning {
    double max_stretch = 0.05;        // a harmonic period may exceed T_j by at most this fraction
    // ... except in the wide plan: when within max_stretch some owned job has
    // no common period with the others and no plan is taken, the harmonic
    // plan again with periods up to this fraction over T_j (placing more of
    // the jobs), judged like the harmonic plan, its stretch counted in full
    // and its collisions absorb_collision_weight times (a fallback must be
    // clearly better: at weight 1, plans predicted 1 % better than running
    // free were taken and dropped again at 128 nodes). Rings of one model at
    // paces of their own, 0.97-1.03 of it, find no common period within 5 %
    // and ran free; within 10 % (twice MaxStretch, local_tuning)
    // testbed-paper's mean slowdown, seeds 1-30, fell from 1.120 to 1.081
    // against fair sharing's 1.127 (doc/scale.md, "Stop 50"). At most
    // max_stretch: no wide plan.
    double wide_stretch = 0.10;
    double keep_tolerance = 0.03;     // measured-period noise kept plans ride out (here and in optimal.cpp)
    double guard = 0.01;              // periods get this much slack over T_j: a gate missed by a hair
                                      // costs a whole period, and measured periods jitter
    int max_shifts = 32;              // candidate shifts per job and period (grid, and as many
                                      // burst-end anchors of fixed jobs again at most)
    // Memory and time bounds whatever the workload: periods longer than this
    // many slots put the leaf on a coarser grid (a multiple of slot_s), so a
    // job's demand pattern, the hyperperiod and the drift horizon stay small;
    // choosing harmonic periods tries at most this many (base, job) pairs.
    int max_period_slots = 4096;
    std::int64_t max_period_tries = 65536;
    int hyper_factor = 8;             // hyperperiod at most this many times the longest period
    std::int64_t max_hyper_slots = 20000;
    int exact_max_jobs = 8;           // branch and bound up to this many jobs, greedy + local search beyond
    double horizon_s = 1.0;           // drift plans: how far ahead shifts are evaluated (DriftHorizon=)
    // A gated plan is taken only if the collisions it still predicts cost at
    // most this much (summed slowdown): a gated job delayed past its slack
    // misses its slot and waits a whole period, which the excess model (a
    // delay, not a lost period) does not see.
    double max_gated_residual = 0.01;
    // ... unless every job's predicted collision delay per iteration fits
    // within this share of its slack (period - T_j): it then stays on its
    // slots and the plan holds.
    double slack_margin = 0.8;
    // ... on a leaf that plans every gated job it sees (none fixed gated by
    // another leaf), this share instead: its prediction is then its own plan
    // alone. Four rings on two leaves (contrib/demo/lock-workload.csv, all
    // holding) ran free at 0.8 for a BERT-base whose predicted delay, 0.83
    // ms, is 0.89 of its slack: 1.109 like fair, where the plan measures
    // 1.030 (optimal 1.039). 0.9 on every leaf took golden cross-leaf to a
    // plan predicted at 0.42 instead of 0.24, and 0.9 in the coordinator's
    // checks as well left it all free (doc/scale.md, "Stop 32"). The plan's
    // decisions carry a share (JobDecision::slack_margin; doubt_margin below
    // since stop 34): the other leaves' reports and the coordinator's
    // hand-over checks hold the job to it, not to 0.8 (doc/scale.md, "Stop 33").
    double take_margin = 0.9;
    // ... and on such a leaf, a plan past take_margin whose delays still fit
    // within this share of the slack (on average the jobs keep their slots,
    // the iterations whose collisions pass the slack wait for the next one)
    // is judged with its collisions counted absorb_collision_weight times.
    // The bar moves from the slack rule's edge, where a plan far better than
    // running free was refused outright, to where the doubted plan and
    // running free cost about the same: on the emulated testbed that
    // BERT-base's measured share fell either side of 0.9 (2 of 10 runs ran
    // another plan; doc/testbed.md, "Four rings, all holding"). Such a
    // leaf's decisions carry this share, doubted or not: the coordinator and
    // the other leaves hand a job over only where its owner would not keep it.
    double doubt_margin = 1.0;
    // Every slack check above also replays the gate over the plan's delays
    // iteration by iteration (policy/slot_misses.h): a plan in which a job
    // would miss a slot is past its slack whatever its mean. Rings at periods
    // of their own (a drift plan) slide through each other for several
    // iterations in a row; on the emulated testbed such a plan, predicted
    // within the slack on average, ran 10-13 % behind the simulator's
    // harmonic plan (doc/testbed.md, "Stop 35").
    bool replay_gate = true;
    // A gated job that has iterated past its period (by more than
    // keep_tolerance, net of the gate's holds) for kOutrunEpochs epochs and
    // kOutrunIterations periods under one decision runs free for a conflict
    // hold, phase-family members excepted (policy/outrun.h): the simulator's
    // Global Coordinator (CoordinationEpoch::free_outrunning) and the schedd
    // deciding the job (Schedd::watch_outrunning). Every pair of two models
    // at 128 nodes: the worst two -4.31 -> +0.19 / -0.93 % against fair
    // (doc/scale.md, "Stop 36"). harmonics.conf FreeOutrunning=.
    bool free_outrunning = true;
    // A harmonic plan refused only for its collisions with jobs that never
    // hold (measuring only: nobody can move them) is searched again with
    // every job's period long enough to absorb its predicted delay within
    // slack_margin of the slack (the absorbing plan). It is taken only if it
    // still beats running free with its collisions counted
    // absorb_collision_weight times: the slot grid's expectation misses
    // collisions with jobs at random phases on loaded links (doc/scale.md,
    // stops 22 and 25).
    bool absorb_measuring = true;
    // ... and, with every job on the leaf holding, each alone filling every
    // link it loads, and the harmonic plan placing them all (refused for its
    // collisions: no shift within max_stretch fits), the absorbing plan with
    // each predicted delay counted absorb_collision_weight times, for the
    // periods and their slack check alike: the slot grid shares a slot's
    // excess out once, while two rings that each fill the link both finish
    // late by all of it (on the fabric 1.14 / 2.21 ms where the grid says
    // 0.61 / 1.06). Calibration case 3: 1.109 (free, = fair) -> 1.057;
    // counted once the plan missed slots, 1.286. On every all-holding leaf
    // (rings of a fraction of the link too) the 128-node batteries moved
    // both ways by up to 3 points (doc/scale.md, "Stop 50"). Needs
    // absorb_measuring.
    bool absorb_holding = true;
    double absorb_collision_weight = 2.0;
    // A measuring-only job this leaf owns may instead be planned on the
    // harmonic grid like the others: running free a little faster than its
    // planned period, it drifts into the gated bursts before its slot and
    // locks there (policy/lock_points.h). The lock plan is tried for one such
    // job on a leaf that plans every gated job it sees, and taken only if the
    // job comes to rest somewhere, the gated jobs' delays at the worst such
    // point fit their slack, and it beats the plans that run the job free,
    // its collisions counted absorb_collision_weight times.
    bool lock_measuring = true;
    // A plan that gates a job anew or moves it costs the job a wait for its
    // first slot, once (policy/gate_waits.h): each plan is charged those
    // waits, each over the job's time left (nothing for a job whose end is
    // not known). Measured with time limits twice the runtime (doc/scale.md,
    // "Stop 44"): gpt3-6.7b at 1,024 nodes against fair, random phases
    // -2.11 -> -1.58 %, learnt in four -1.39 -> -0.98 %; the pairs' mean
    // -0.103 -> -0.038 % (random), -0.101 -> -0.045 % (learnt), +0.033 ->
    // +0.028 % (aligned, whose one-model rows are unchanged).
    bool charge_waits = true;
};

// The leaf's links its problem is about: the uplink and downlink (absent ones skipped).
std::vector<LinkId> leaf_links(const Topology& topo, SwitchId leaf);
// Whether `leaf`'s uplink and downlink are each at least as wide as
// `than`'s: the same rings then collide no worse there.
bool links_as_wide(const Topology& topo, SwitchId leaf, SwitchId than);
// Same gate times: both free, or the same period and phase (origin + shift
// equal modulo the period).
bool same_schedule(const JobDecision& a, const JobDecision& b);
// True when `job` loads one of `links`.
bool job_loads(const JobProfile& job, const std::vector<LinkId>& links);

// The share of its slack a gated job's collisions may take: its plan's, or
// the default where the decision does not say.
inline double margin_of(const LocalTuning& t, const JobDecision& d) {
    return d.slack_margin > 0 ? d.slack_margin : t.slack_margin;
}

// The share of a gated job's slack (period - isolated iteration time) that a
// collision delay per iteration takes: above LocalTuning::slack_margin the job
// misses slots. A job with no slack is past it at any delay, at none not.
double slack_share(double delay_s, double period_s, double isolated_s);

// Whether a gated job whose collisions take `used` of its slack (slack_share)
// is past what its decision allows: the one rule by which the coordinator
// (the simulator's and harmonics-coordd's check_slack) frees or hands over
// a job, a leaf asks to adopt one, and a new lock plan is refused, so that
// they agree.
inline bool past_margin(const LocalTuning& t, const JobDecision& d, double used) {
    return used > margin_of(t, d) + 1e-12;
}

// The tuning harmonics.conf sets (MaxStretch, Guard), the rest at defaults:
// what harmonics-schedd and harmonics-sim both run.
LocalTuning local_tuning(const PolicyOptions& opts);

// The two tiers as a Policy: one LocalScheduler per leaf plus the global
// coordinator (harmonics-sim's "harmonics"). Another tuning, under another
// name, measures what a change of the local scheduler's rules would gain
// (bench-harmonics' "harmonics-tuned").
std::unique_ptr<Policy> make_harmonics_policy(const PolicyOptions& opts, const LocalTuning& tuning = {},
                                              const std::string& name = "harmonics");

class LocalScheduler {
public:
    explicit LocalScheduler(const PolicyOptions& opts, const LocalTuning& tuning = {})
        : opts_(opts), tuning_(tuning) {}
    LeafResult decide(const Topology& topo, const LeafProblem& problem) const;
    // A leaf whose jobs are all decided (every gated one in problem.fixed,
    // the rest free): the delay per iteration, in seconds, that collisions on
    // this leaf's links cost each gated job over the next horizon (the slack
    // rule's prediction, here for jobs other leaves own too).
    std::map<JobId, double> collision_delays(const Topology& topo, const LeafProblem& problem) const;
    const LocalTuning& tuning() const { return tuning_; }

private:
    // decide() with the measuring-only jobs it owns run free.
    LeafResult decide_plans(const Topology& topo, const LeafProblem& problem) const;
    // Replaces `res` by the lock plan for `measuring` (owned, not holding) when it wins.
    void try_lock(const Topology& topo, const LeafProblem& problem, JobId measuring, LeafResult& res) const;

    PolicyOptions opts_;
    LocalTuning tuning_;
};

}  // namespace harmonics
