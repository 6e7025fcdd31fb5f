// The slot-grid problem every time-shifting policy solves (harmonics' local
// scheduler per leaf, the brute-force enumerator, the optimal MILP for the
// whole cluster): periodic jobs load a set of links; time is cut into slots of
// `slot_s`; job j repeats every `period_slots` and its first collective of each
// iteration starts at slot `shift` (mod period). Over one hyperperiod (the lcm
// of the periods) a link's demand in a slot is the sum of the jobs' fractions
// of its capacity; demand above 1 is work the link cannot carry in that slot,
// and that excess delays some job's communication by the same amount.
//
// Predicted cost (to minimise; the same number for every solver):
//
//   cost = sum_j (period_j / T_j - 1)                         stretch penalty
//        + sum_l weight_l * sum_t max(0, background_l + sum_j d_jl[(t - shift_j) mod P_j] - 1) / H
//
// where H is the hyperperiod in slots. Why the second term approximates the
// slowdown summed over jobs: under max-min sharing the work a link cannot carry
// in a slot is carried later, at the alone rate of the job it belongs to, so
// the delays over H add up to the excess (exactly so when each colliding job
// alone would fill the link, d = 1, the common case on an oversubscribed
// uplink). Job j runs H/P_j iterations in H, so its slowdown is its delay
// divided by (H/P_j)·T_j ≈ delay / H. The term is linear in the shift choice
// once max(0, ·) gets an auxiliary variable, which is what lets a MILP
// (binary x_{j,s}: job j takes candidate shift s) solve the same problem.
#pragma once

#include <cstdint>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {

struct SlotLink {
    SlotLink() = default;
    SlotLink(LinkId id_, double capacity, double background_ = 0, double weight_ = 1)
        : id(id_), capacity_Bps(capacity), background(background_), weight(weight_) {}
    LinkId id = -1;
    double capacity_Bps = 0;
    double background = 0;   // load of jobs running free (not gated), as a capacity fraction, every slot
    double weight = 1;       // e.g. 0.5 each for an uplink/downlink pair carrying the same rings
    // Jobs running free at unknown phases: extra load y_k with probability
    // p_k (summing to 1). Empty (the MILP's case): no such jobs. When set, a
    // slot's excess is its expectation, sum_k p_k max(0, load + y_k - 1),
    // still convex in the load. Sorted by y (add_free_job keeps it so).
    std::vector<std::pair<double, double>> background_mix;
};

// The excess of `link` in a slot carrying `load` (max(0, load - 1), or its
// expectation over the link's background mix).
double slot_excess(const SlotLink& link, double load);

// Adds a job that runs free to a link's background mix: peak fraction `f`
// for a fraction `duty` of the time, at a phase independent of the others.
// Keeps at most `max_points` values, merging neighbours that lose the least
// variance (mean-preserving; the expected excess is then slightly low).
void add_free_job(SlotLink& link, double f, double duty, size_t max_points = 12);

// Demand of one job on one link over its period, shift 0: pattern[t] is the
// fraction of the link's capacity the job uses in slot t (first collective
// starts at slot 0).
struct SlotDemand {
    int link = -1;                // index into SlotProblem::links
    std::vector<double> pattern;  // size == SlotJob::period_slots
};

struct SlotJob {
    JobId id = 0;
    double isolated_period_s = 0;   // T_j (measured when known)
    int period_slots = 0;           // P_j on the grid, >= T_j
    std::vector<SlotDemand> demand; // only the links of the problem that the job loads
    std::vector<int> shifts;        // candidate shifts, each in [0, period_slots), sorted, non-empty
    int fixed_shift = -1;           // >= 0: decided elsewhere; the job is load, not a variable
};

struct SlotProblem {
    double slot_s = 0.001;
    int hyperperiod_slots = 0;      // lcm of period_slots over jobs (set by finalize_hyperperiod)
    // false: hyperperiod_slots is a planning horizon the periods need not
    // divide (jobs drift against each other and the policy re-plans every
    // epoch). The cost formula is the same; only rotating every shift at once
    // no longer leaves the cost unchanged.
    bool cyclic = true;
    std::vector<SlotLink> links;
    std::vector<SlotJob> jobs;
};

// One shift per job (SlotProblem::jobs order; a fixed job's entry is its fixed_shift).
struct SlotSolution {
    std::vector<int> shift;
    double cost = 0;
    bool optimal = false;   // proven optimal by the solver that produced it
    double gap = 0;         // relative gap when not proven optimal (0 when unknown)
};

// Greatest common divisor / least common multiple, lcm saturating at `cap`
// (returns cap + 1 when the true lcm exceeds cap).
std::int64_t gcd64(std::int64_t a, std::int64_t b);
std::int64_t lcm_capped(std::int64_t a, std::int64_t b, std::int64_t cap);

// Sets hyperperiod_slots to the lcm of the jobs' periods; false (and leaves it
// unchanged) when that exceeds `max_slots`.
bool finalize_hyperperiod(SlotProblem& p, std::int64_t max_slots);

// The iteration pattern of a job relative to its first collective: the
// communication phases as (begin, end) seconds from the first collective's
// start, and the iteration's duration T_j.
struct CommWindow {
    double begin_s = 0;
    double end_s = 0;
    const CommPhase* phase = nullptr;
};
std::vector<CommWindow> comm_windows(const JobProfile& job);
double iteration_period_s(const JobProfile& job);  // isolated if known, else measured

// The capacity fraction a phase takes while it runs alone: on the link of one
// of its uses (multiplicity · alone rate / capacity), or on link `id` summed
// over its uses of it. 0 for a phase without network time.
double use_fraction(const CommPhase& ph, const LinkUse& u, double capacity_Bps);
double link_fraction(const CommPhase& ph, LinkId id, double capacity_Bps);

// Adds `job` with period `period_slots` to `p`: its demand on each link of
// p.links it loads (multiplicity · alone rate / capacity, pro rata for slots a
// phase covers partly) and candidate shifts every `shift_step` slots
// (shift_step <= 0: chosen so there are at most `max_shifts` candidates).
// Returns the job's index.
int add_slot_job(SlotProblem& p, const JobProfile& job, int period_slots, int shift_step, int max_shifts);

// The average capacity fraction a free-running job puts on link index `k`,
// and the most it puts there while communicating.
double average_load(const SlotProblem& p, const JobProfile& job, int k);
double peak_load(const SlotProblem& p, const JobProfile& job, int k);

// Predicted cost (the formula above) of a full assignment; shift.size() == jobs.size().
double predicted_cost(const SlotProblem& p, const std::vector<int>& shift);

// Harmonic periods: for each T (seconds) a period in slots within
// [T, T·(1 + max_stretch)] such that all periods share a hyperperiod of at most
// `max_hyper_slots`, preferring the least summed stretch. `fixed[i] > 0` keeps
// period i as given (a job another leaf decided). Returns 0 for a job that
// cannot be made commensurate with the rest: it should run free.
// Bases are tried from the longest period down, each costing one pass over
// the jobs; `max_tries` > 0 caps bases · jobs (the whole search is O(longest
// period · jobs)) and the best try so far is returned.
std::vector<int> harmonic_periods(const std::vector<double>& T_s, const std::vector<int>& fixed, double slot_s,
                                  double max_stretch, std::int64_t max_hyper_slots, std::int64_t max_tries = 0);

}  // namespace harmonics
