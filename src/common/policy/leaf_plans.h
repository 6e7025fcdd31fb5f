// The ways a leaf can run its jobs, as slot-grid problems (the Local
// Scheduler's plans): harmonic periods sharing a hyperperiod, periods of
// their own drifting against each other, or no gate at all. LeafBuilder
// turns one leaf's problem (its jobs, the decisions other leaves fixed, last
// epoch's) into them; harmonics_local.cpp searches and judges them.
// Internal to the Local Scheduler: no I/O, nothing else includes it.
#ifndef HARMONICS_POLICY_LEAF_PLANS_H
#define HARMONICS_POLICY_LEAF_PLANS_H

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "policy/harmonics_local.h"
#include "policy/slot_grid.h"

namespace harmonics::local {

// Shift in slots of a decision on a grid of `period` slots starting at slot
// `origin` (absolute, from time 0).
inline int decision_shift(const JobDecision& d, double slot_s, int period, long origin) {
    long s = std::lround((d.origin_s + d.shift_s) / slot_s) - origin;
    return static_cast<int>(((s % period) + period) % period);
}

inline int decision_period(const JobDecision& d, double slot_s) {
    return d.gated && d.period_s > 0 ? static_cast<int>(std::lround(d.period_s / slot_s)) : 0;
}

struct Built {
    SlotProblem sp;
    long origin = 0;                  // grid origin, in slots from time 0
    std::vector<size_t> job_of;       // sp.jobs[i] is problem.jobs[job_of[i]]
    std::vector<int> warm;            // last epoch's shift per sp job, -1 when none
    std::vector<size_t> free_owned;   // owned jobs left ungated
    // Per link, the background mix of the free jobs that hold (whose ranks
    // can be gated): the plan's collisions without the measuring-only jobs.
    // Empty when every job on the leaf holds (it would be the background mix).
    std::vector<std::vector<std::pair<double, double>>> holding_mix;
};

// The ways a leaf can run its jobs: harmonic periods sharing a hyperperiod,
// periods of their own that drift against each other (planned over a
// horizon and re-planned every epoch), or no gate at all.
struct Plans {
    Built harmonic;
    Built drift;
    double all_free_cost = 0;
};

// Peak demand of every job summed per link stays within capacity: no
// collision is possible, so nobody needs a gate (or a stretched period).
bool contention_free(const SlotProblem& probe);

// The cost of an assignment with no collision at all.
double stretch_only(const SlotProblem& sp);

// One leaf's problem as plans. Periods and shifts are in slots of the leaf's
// grid (grid_slot_s: opts.slot_s, coarser where periods are long).
class LeafBuilder {
public:
    LeafBuilder(const PolicyOptions& o, const LocalTuning& t, const Topology& topo, const LeafProblem& pb)
        : opts_(o), tune_(t), topo_(topo), pb_(pb) {
        opts_.slot_s = grid_slot_s();
    }

    Plans build() const;

    // Nothing this leaf carries can collide, whatever the phases: on every
    // leaf link the peaks of all its jobs (owned, fixed elsewhere, free) fit
    // the link together (a job's own collectives run one after another).
    // Then the leaf runs its jobs free without building a plan: a 4.5 s
    // ring alone on a leaf cost 0.7 ms of slot patterns to learn that.
    bool cannot_collide() const;

    // What running every owned job free costs where nothing can collide: the
    // price build() gives the free plan then (the stretch of jobs gated
    // elsewhere, and the queueing estimate), without the slot patterns.
    double calm_free_cost() const;

    // The harmonic plan again with every job's period at least floor_s[i]
    // (pb_.jobs order; 0: no floor).
    Built harmonic_with_floors(const std::vector<double>& floor_s) const { return harmonic(targets(&floor_s)); }

    // Every job as decided (pb_.fixed; absent or ungated: free at a random
    // phase), over the drift horizon from now. Shifts are in `warm`.
    Built decided() const;

private:
    struct Targets {
        std::vector<double> T, target;
        std::vector<int> fixed, with_prev;
        std::int64_t longest = 1;
    };

    Targets targets(const std::vector<double>* floor_s = nullptr) const;

    Built harmonic(const Targets& g) const;

    // Per job, the period in slots another leaf gated it on (0: owned here,
    // or run free by another leaf's decision).
    std::vector<int> fixed_periods() const;

    // How far ahead plans that drift are evaluated: horizon_s, at least two
    // of the longest period, at most max_hyper_slots.
    std::int64_t horizon_slots(std::int64_t longest) const;
    long now_slot() const { return std::lround(std::floor(pb_.now_s / opts_.slot_s)); }

    // The leaf's slot: opts.slot_s, or the least multiple of it on which the
    // longest period any job may get (its stretched target, or a period
    // decided elsewhere) spans at most max_period_slots. Every structure of the
    // search is sized by periods, hyperperiod or horizon in slots, so this
    // bounds them for any mix of periods (a coarser grid only rounds shifts).
    double grid_slot_s() const;

    // harmonic_periods over the jobs that are not free-running-by-decree (-1).
    std::vector<int> periods(const std::vector<double>& T, const std::vector<int>& fixed, std::int64_t cap) const;

    // A job with no period of its own yet takes a period already in force on
    // the leaf (decided elsewhere, or kept from last epoch) that lies between
    // its T and its target, rather than a slot or two more that no other job
    // shares: two ranks of one model measure 100.0 and 100.2 ms, the first
    // was gated on 101 ms, and the second's target of 101.2 ms would put it
    // on a period of its own that drifts across the other's bursts. It loses
    // at most the guard; kept periods may already go below T by
    // keep_tolerance.
    void share_periods_in_force(const std::vector<double>& T, const std::vector<double>& factor,
                                const std::vector<double>& target, const std::vector<int>& fixed,
                                std::vector<int>* with_prev) const;

    // Slowdown summed over the jobs that run free under `per` (period 0),
    // from the queueing model of free_running.h on each leaf link (a job's
    // worst link counts: uplink and downlink carry the same rings). Gated
    // jobs take their average load off the link. Links loaded beyond 1 on
    // average are left to the slot grid: there every job's period already
    // stretches to the link-load bound (load_factors), and the model,
    // whose jobs never stretch, would count that wait twice.
    double queued_free_cost(const std::vector<int>& per) const;

    static int count_placed(const std::vector<int>& per, const std::vector<int>& fixed);

    // Per job, the average load of the most loaded leaf link it crosses when
    // that exceeds 1 (else 1): no schedule fits more than the link carries,
    // so such jobs' periods stretch to the link-load bound.
    std::vector<double> load_factors() const;

    // use[i][k]: job i's average load on leaf link k of `sp`.
    std::vector<std::vector<double>> link_loads(const SlotProblem& sp) const;

    // Per leaf link, the average load of all its jobs.
    static std::vector<double> offered_loads(const std::vector<std::vector<double>>& use);

    // Work a link cannot carry is made up at the alone rate of the jobs it
    // belongs to: a job using a fraction f of the link needs 1/f as long, so
    // each link's excess is weighted by 1 / (its jobs' typical fraction).
    void rate_weights(SlotProblem& sp) const;

    SlotProblem empty_problem() const;

    // cyclic: `span` caps the hyperperiod; otherwise it is the horizon.
    Built assemble(const std::vector<int>& per, const std::vector<int>& fixed, std::int64_t span, long origin,
                   bool cyclic) const;

    PolicyOptions opts_;   // slot_s: the leaf's grid (grid_slot_s)
    const LocalTuning& tune_;
    const Topology& topo_;
    const LeafProblem& pb_;
};

}  // namespace harmonics::local

#endif
