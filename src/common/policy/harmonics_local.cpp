// Harmonics' Local Scheduler: builds the leaf's slot-grid problem (harmonic
// periods, fixed cross-leaf jobs, free-running jobs as background), searches
// it, and keeps last epoch's schedule unless the new one is predicted to be
// better by more than the change threshold.
#include "policy/harmonics_local.h"

#include "policy/burst_packing.h"
#include "policy/free_running.h"
#include "policy/lock_points.h"
#include "policy/slot_delays.h"
#include "policy/release.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace harmonics {

std::vector<LinkId> leaf_links(const Topology& topo, SwitchId leaf) {
    std::vector<LinkId> out;
    const Switch& s = topo.sw(leaf);
    if (s.up >= 0) out.push_back(s.up);
    if (s.down >= 0) out.push_back(s.down);
    return out;
}

bool job_loads(const JobProfile& job, const std::vector<LinkId>& links) {
    for (const CommPhase& ph : job.phases)
        for (const LinkUse& u : ph.links)
            if (std::find(links.begin(), links.end(), u.link) != links.end()) return true;
    return false;
}

namespace {

// Shift in slots of a decision on a grid of `period` slots starting at slot
// `origin` (absolute, from time 0).
int decision_shift(const JobDecision& d, double slot_s, int period, long origin) {
    long s = std::lround((d.origin_s + d.shift_s) / slot_s) - origin;
    return static_cast<int>(((s % period) + period) % period);
}

int decision_period(const JobDecision& d, double slot_s) {
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
bool contention_free(const SlotProblem& probe) {
    std::vector<double> peak(probe.links.size(), 0);
    for (size_t k = 0; k < probe.links.size(); ++k) {
        peak[k] = probe.links[k].background;
        for (const auto& [y, p] : probe.links[k].background_mix) peak[k] = std::max(peak[k], probe.links[k].background + y);
    }
    for (const SlotJob& j : probe.jobs)
        for (const SlotDemand& d : j.demand) peak[d.link] += *std::max_element(d.pattern.begin(), d.pattern.end());
    for (double x : peak)
        if (x > 1.0 + 1e-9) return false;
    return true;
}

// Slots job i's windows last, rounded up: packing bursts back to back needs
// shifts that differ by these lengths.
void burst_lengths(const SlotJob& j, std::vector<std::int64_t>& out) {
    for (const SlotDemand& d : j.demand) {
        int run = 0;
        const int P = static_cast<int>(d.pattern.size());
        for (int t = 0; t < 2 * P; ++t) {
            if (d.pattern[t % P] > 0 && run < P) {
                ++run;
            } else {
                if (run > 0 && t > run) out.push_back(run);  // a full burst seen (not cut at t = 0)
                run = 0;
            }
        }
    }
}

// Candidate shifts: a grid whose step divides the periods and burst lengths
// when it can (so bursts can sit back to back), at most `max_shifts` per job,
// aligned to the end of a fixed job's burst, plus last epoch's shift.
void choose_shifts(SlotProblem& sp, const std::vector<int>& warm, int max_shifts) {
    std::vector<std::int64_t> lens;
    std::int64_t g = 0;
    for (const SlotJob& j : sp.jobs) {
        g = gcd64(g, j.period_slots);
        burst_lengths(j, lens);
    }
    for (std::int64_t l : lens) g = gcd64(g, l);
    if (g <= 0) g = 1;
    std::int64_t mode = 0;
    {
        std::map<std::int64_t, int> count;
        int most = 0;
        for (std::int64_t l : lens)
            if (++count[l] > most || (count[l] == most && l < mode)) {
                most = count[l];
                mode = l;
            }
    }
    std::vector<int> anchors;  // where a fixed job's burst ends, in hyperperiod slots
    for (const SlotJob& f : sp.jobs) {
        if (f.fixed_shift < 0) continue;
        for (const SlotDemand& d : f.demand) {
            const int P = f.period_slots;
            for (int t = 0; t < P; ++t)
                if (d.pattern[t] > 0 && d.pattern[(t + 1) % P] <= 0) anchors.push_back(f.fixed_shift + t + 1);
        }
    }
    for (size_t i = 0; i < sp.jobs.size(); ++i) {
        SlotJob& j = sp.jobs[i];
        if (j.fixed_shift >= 0) continue;
        const std::int64_t P = j.period_slots;
        std::int64_t step = g * std::max<std::int64_t>(1, (P / g + max_shifts - 1) / max_shifts);
        // When the common divisor is too fine for the candidate budget, step
        // by the most common burst length instead: equal bursts then tile.
        if (P / g > max_shifts && mode > 0) step = mode * std::max<std::int64_t>(1, (P / mode + max_shifts - 1) / max_shifts);
        std::int64_t off = anchors.empty() ? 0 : anchors.front() % step;
        j.shifts.clear();
        for (std::int64_t s = off; s < P; s += step) j.shifts.push_back(static_cast<int>(s));
        // At most max_shifts anchors (evenly thinned): with many fixed jobs
        // they would otherwise outnumber the grid and every search step.
        std::vector<int> own_anchors;
        for (int a : anchors) own_anchors.push_back(static_cast<int>(a % P));
        std::sort(own_anchors.begin(), own_anchors.end());
        own_anchors.erase(std::unique(own_anchors.begin(), own_anchors.end()), own_anchors.end());
        const size_t na = own_anchors.size(), keep = std::min<size_t>(na, std::max(1, max_shifts));
        for (size_t k = 0; k < keep; ++k) j.shifts.push_back(own_anchors[k * na / keep]);
        if (warm[i] >= 0) j.shifts.push_back(warm[i]);
        std::sort(j.shifts.begin(), j.shifts.end());
        j.shifts.erase(std::unique(j.shifts.begin(), j.shifts.end()), j.shifts.end());
    }
}

}  // namespace

double slack_share(double delay_s, double period_s, double isolated_s) {
    const double slack_s = period_s - isolated_s;
    if (slack_s > 0) return delay_s / slack_s;
    return delay_s > 0 ? std::numeric_limits<double>::infinity() : 0;
}

bool same_schedule(const JobDecision& a, const JobDecision& b) {
    if (a.gated != b.gated) return false;
    if (!a.gated) return true;
    if (std::abs(a.period_s - b.period_s) > 1e-12) return false;
    double phase = std::fmod(std::abs(a.origin_s + a.shift_s - b.origin_s - b.shift_s), a.period_s);
    return phase < 1e-9 || a.period_s - phase < 1e-9;
}

namespace {

// The cost of an assignment with no collision at all.
double stretch_only(const SlotProblem& sp) {
    double c = 0;
    for (const SlotJob& j : sp.jobs)
        if (j.isolated_period_s > 0) c += j.period_slots * sp.slot_s / j.isolated_period_s - 1;
    return c;
}

class LeafBuilder {
public:
    LeafBuilder(const PolicyOptions& o, const LocalTuning& t, const Topology& topo, const LeafProblem& pb)
        : opts_(o), tune_(t), topo_(topo), pb_(pb) {
        opts_.slot_s = grid_slot_s();
    }

    Plans build() const {
        const Targets g = targets();
        const size_t n = pb_.jobs.size();
        Plans plans;
        plans.harmonic = harmonic(g);
        // Drift: every job at its own least period (last epoch's when still
        // valid), over a horizon starting now.
        std::vector<int> own(n);
        for (size_t i = 0; i < n; ++i)
            own[i] = g.with_prev[i] != 0 ? g.with_prev[i] : static_cast<int>(std::ceil(g.target[i] / opts_.slot_s - 1e-9));
        const std::int64_t horizon = horizon_slots(g.longest);
        plans.drift = assemble(own, g.fixed, horizon, now_slot(), false);
        // No gate: every owned job runs free at a random phase.
        std::vector<int> none = own;
        for (size_t i = 0; i < n; ++i)
            if (g.fixed[i] == 0) none[i] = 0;
        Built f = assemble(none, g.fixed, horizon, plans.drift.origin, false);
        // The slot grid sees one slot at a time; the queueing estimate also
        // sees delayed jobs meet again. Either can be the larger.
        plans.all_free_cost = std::max(predicted_cost(f.sp, f.warm), stretch_only(f.sp) + queued_free_cost(none));
        return plans;
    }

    // Nothing this leaf carries can collide, whatever the phases: on every
    // leaf link the peaks of all its jobs (owned, fixed elsewhere, free) fit
    // the link together (a job's own collectives run one after another).
    // Then the leaf runs its jobs free without building a plan: a 4.5 s
    // ring alone on a leaf cost 0.7 ms of slot patterns to learn that.
    bool cannot_collide() const {
        const SlotProblem sp = empty_problem();
        for (size_t k = 0; k < sp.links.size(); ++k) {
            double peak = 0;
            for (const JobProfile& j : pb_.jobs) peak += peak_load(sp, j, static_cast<int>(k));
            if (peak > 1.0 + 1e-9) return false;
        }
        return true;
    }

    // What running every owned job free costs where nothing can collide: the
    // price build() gives the free plan then (the stretch of jobs gated
    // elsewhere, and the queueing estimate), without the slot patterns.
    double calm_free_cost() const {
        const Targets g = targets();
        std::vector<int> none(pb_.jobs.size(), 0);
        double stretch = 0;
        for (size_t i = 0; i < none.size(); ++i) {
            if (g.fixed[i] == 0) continue;
            none[i] = g.fixed[i];
            const double T = iteration_period_s(pb_.jobs[i]);
            if (none[i] > 0 && T > 0) stretch += none[i] * opts_.slot_s / T - 1;
        }
        return std::max(stretch, stretch + queued_free_cost(none));
    }

    // The harmonic plan again with every job's period at least floor_s[i]
    // (pb_.jobs order; 0: no floor).
    Built harmonic_with_floors(const std::vector<double>& floor_s) const { return harmonic(targets(&floor_s)); }

    // Every job as decided (pb_.fixed; absent or ungated: free at a random
    // phase), over the drift horizon from now. Shifts are in `warm`.
    Built decided() const {
        const size_t n = pb_.jobs.size();
        std::vector<int> per(n, 0), fixed(n, -1);
        std::int64_t longest = 1;
        for (size_t i = 0; i < n; ++i) {
            auto f = pb_.fixed.find(pb_.jobs[i].id);
            per[i] = f != pb_.fixed.end() ? decision_period(f->second, opts_.slot_s) : 0;
            if (per[i] > 0) fixed[i] = per[i];
            longest = std::max<std::int64_t>(longest, per[i]);
        }
        return assemble(per, fixed, horizon_slots(longest), now_slot(), false);
    }

private:
    struct Targets {
        std::vector<double> T, target;
        std::vector<int> fixed, with_prev;
        std::int64_t longest = 1;
    };

    Targets targets(const std::vector<double>* floor_s = nullptr) const {
        const size_t n = pb_.jobs.size();
        Targets g;
        g.T.assign(n, 0);
        g.target.assign(n, 0);
        g.fixed.assign(n, 0);
        g.with_prev.assign(n, 0);
        const std::vector<double> factor = load_factors();
        for (size_t i = 0; i < n; ++i) {
            const JobProfile& j = pb_.jobs[i];
            g.T[i] = iteration_period_s(j);
            // The least period the job can keep: its own T, slack for noise,
            // and its share of a link that is overloaded even on average.
            g.target[i] = g.T[i] * factor[i] * (1 + tune_.guard);
            if (floor_s) g.target[i] = std::max(g.target[i], (*floor_s)[i]);
            g.longest = std::max<std::int64_t>(g.longest, std::llround(std::ceil(g.target[i] * (1 + tune_.max_stretch) / opts_.slot_s)));
            auto f = pb_.fixed.find(j.id);
            if (f != pb_.fixed.end()) {
                g.fixed[i] = decision_period(f->second, opts_.slot_s);
                if (g.fixed[i] == 0) g.fixed[i] = -1;  // runs free, decided elsewhere
            }
            g.with_prev[i] = g.fixed[i];
            auto p = pb_.previous.find(j.id);
            if (g.fixed[i] == 0 && p != pb_.previous.end()) {
                // Last epoch's period stays while the measured T is within
                // keep_tolerance of it: hooks' periods jitter by more than the
                // guard, and re-planning on every wobble moves running jobs.
                int per = decision_period(p->second, opts_.slot_s);
                double ps = per * opts_.slot_s;
                if (per > 0 && ps >= g.T[i] * factor[i] * (1 - tune_.keep_tolerance) - 1e-12 &&
                    ps <= g.target[i] * (1 + tune_.max_stretch) + 1e-12 &&
                    (!floor_s || ps >= (*floor_s)[i] - 1e-12))
                    g.with_prev[i] = per;
            }
        }
        share_periods_in_force(g.T, factor, g.target, g.fixed, &g.with_prev);
        return g;
    }

    Built harmonic(const Targets& g) const {
        const std::int64_t cap = std::min<std::int64_t>(tune_.max_hyper_slots, g.longest * tune_.hyper_factor);
        std::vector<int> per = periods(g.target, g.with_prev, cap);
        std::vector<int> fresh = periods(g.target, g.fixed, cap);
        if (count_placed(fresh, g.fixed) > count_placed(per, g.fixed)) per = fresh;
        return assemble(per, g.fixed, cap, 0, true);
    }

    // How far ahead plans that drift are evaluated: horizon_s, at least two
    // of the longest period, at most max_hyper_slots.
    std::int64_t horizon_slots(std::int64_t longest) const {
        const std::int64_t h = std::max<std::int64_t>(std::llround(tune_.horizon_s / opts_.slot_s), 2 * longest);
        return std::min<std::int64_t>(h, tune_.max_hyper_slots);
    }
    long now_slot() const { return std::lround(std::floor(pb_.now_s / opts_.slot_s)); }

    // The leaf's slot: opts.slot_s, or the least multiple of it on which the
    // longest period any job may get (its stretched target, or a period
    // decided elsewhere) spans at most max_period_slots. Every structure of the
    // search is sized by periods, hyperperiod or horizon in slots, so this
    // bounds them for any mix of periods (a coarser grid only rounds shifts).
    double grid_slot_s() const {
        const std::vector<double> factor = load_factors();
        double longest_s = 0;
        for (size_t i = 0; i < pb_.jobs.size(); ++i) {
            const JobProfile& j = pb_.jobs[i];
            longest_s = std::max(longest_s, iteration_period_s(j) * factor[i] * (1 + tune_.guard) * (1 + tune_.max_stretch));
            for (const auto* m : {&pb_.fixed, &pb_.previous}) {
                auto f = m->find(j.id);
                if (f != m->end() && f->second.gated) longest_s = std::max(longest_s, f->second.period_s);
            }
        }
        const double limit = std::max(16, tune_.max_period_slots);
        const double slots = longest_s / opts_.slot_s;
        if (!(slots > limit)) return opts_.slot_s;
        return opts_.slot_s * std::ceil(std::min(slots, 1e12) / limit);
    }

    // harmonic_periods over the jobs that are not free-running-by-decree (-1).
    std::vector<int> periods(const std::vector<double>& T, const std::vector<int>& fixed, std::int64_t cap) const {
        std::vector<double> t2;
        std::vector<int> f2, idx;
        for (size_t i = 0; i < T.size(); ++i)
            if (fixed[i] >= 0) {
                t2.push_back(T[i]);
                f2.push_back(fixed[i]);
                idx.push_back(static_cast<int>(i));
            }
        std::vector<int> got = harmonic_periods(t2, f2, opts_.slot_s, tune_.max_stretch, cap, tune_.max_period_tries);
        std::vector<int> out(T.size(), 0);
        for (size_t k = 0; k < idx.size(); ++k) out[idx[k]] = got[k];
        return out;
    }

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
                                std::vector<int>* with_prev) const {
        // Periods in force before this pass: a period one newcomer borrows
        // is not lent on to the next (the result does not depend on job order).
        const std::vector<int> in_force = *with_prev;
        for (size_t i = 0; i < T.size(); ++i) {
            if (fixed[i] != 0 || in_force[i] != 0) continue;
            int best = 0;
            for (size_t k = 0; k < T.size(); ++k) {
                const double ps = in_force[k] * opts_.slot_s;
                if (k != i && in_force[k] > best && ps >= T[i] * factor[i] - 1e-12 && ps < target[i] - 1e-12)
                    best = in_force[k];
            }
            if (best > 0) (*with_prev)[i] = best;
        }
    }

    // Slowdown summed over the jobs that run free under `per` (period 0),
    // from the queueing model of free_running.h on each leaf link (a job's
    // worst link counts: uplink and downlink carry the same rings). Gated
    // jobs take their average load off the link. Links loaded beyond 1 on
    // average are left to the slot grid: there every job's period already
    // stretches to the link-load bound (load_factors), and the model,
    // whose jobs never stretch, would count that wait twice.
    double queued_free_cost(const std::vector<int>& per) const {
        const SlotProblem sp = empty_problem();
        const std::vector<std::vector<double>> use = link_loads(sp);
        const std::vector<double> offered = offered_loads(use);
        std::vector<double> worst(pb_.jobs.size(), 0);
        for (size_t k = 0; k < sp.links.size(); ++k) {
            if (offered[k] > 1 + 1e-9) continue;
            double gated = 0;
            std::vector<FreeRunner> runners;
            std::vector<size_t> who;
            for (size_t i = 0; i < pb_.jobs.size(); ++i) {
                const double avg = use[i][k];
                if (per[i] > 0) {
                    gated += avg;
                } else if (avg > 0) {
                    const double T = iteration_period_s(pb_.jobs[i]), cap = peak_load(sp, pb_.jobs[i], static_cast<int>(k));
                    runners.push_back({avg * T, std::max(0.0, T - avg * T / cap), cap});
                    who.push_back(i);
                }
            }
            if (runners.size() < 2) continue;
            const std::vector<double> slow = free_running_slowdowns(runners, 1 - gated);
            for (size_t r = 0; r < who.size(); ++r) worst[who[r]] = std::max(worst[who[r]], slow[r]);
        }
        double sum = 0;
        for (double x : worst) sum += x;
        return sum;
    }

    static int count_placed(const std::vector<int>& per, const std::vector<int>& fixed) {
        int c = 0;
        for (size_t i = 0; i < per.size(); ++i) c += per[i] > 0 && fixed[i] == 0;
        return c;
    }

    // Per job, the average load of the most loaded leaf link it crosses when
    // that exceeds 1 (else 1): no schedule fits more than the link carries,
    // so such jobs' periods stretch to the link-load bound.
    std::vector<double> load_factors() const {
        const std::vector<std::vector<double>> use = link_loads(empty_problem());
        const std::vector<double> rho = offered_loads(use);
        std::vector<double> f(pb_.jobs.size(), 1.0);
        for (size_t i = 0; i < pb_.jobs.size(); ++i)
            for (size_t k = 0; k < rho.size(); ++k)
                if (use[i][k] > 0) f[i] = std::max(f[i], rho[k]);
        return f;
    }

    // use[i][k]: job i's average load on leaf link k of `sp`.
    std::vector<std::vector<double>> link_loads(const SlotProblem& sp) const {
        std::vector<std::vector<double>> use(pb_.jobs.size(), std::vector<double>(sp.links.size(), 0));
        for (size_t i = 0; i < pb_.jobs.size(); ++i)
            for (size_t k = 0; k < sp.links.size(); ++k) use[i][k] = average_load(sp, pb_.jobs[i], static_cast<int>(k));
        return use;
    }

    // Per leaf link, the average load of all its jobs.
    static std::vector<double> offered_loads(const std::vector<std::vector<double>>& use) {
        std::vector<double> rho(use.empty() ? 0 : use[0].size(), 0);
        for (const auto& u : use)
            for (size_t k = 0; k < u.size(); ++k) rho[k] += u[k];
        return rho;
    }

    // Work a link cannot carry is made up at the alone rate of the jobs it
    // belongs to: a job using a fraction f of the link needs 1/f as long, so
    // each link's excess is weighted by 1 / (its jobs' typical fraction).
    void rate_weights(SlotProblem& sp) const {
        for (size_t k = 0; k < sp.links.size(); ++k) {
            double num = 0, den = 0;
            for (const JobProfile& j : pb_.jobs) {
                double avg = average_load(sp, j, static_cast<int>(k));
                num += peak_load(sp, j, static_cast<int>(k)) * avg;
                den += avg;
            }
            double typical = den > 0 ? std::max(0.05, num / den) : 1.0;
            sp.links[k].weight = 1.0 / sp.links.size() / typical;
        }
    }

    SlotProblem empty_problem() const {
        SlotProblem sp;
        sp.slot_s = opts_.slot_s;
        std::vector<LinkId> links = leaf_links(topo_, pb_.leaf);
        for (LinkId l : links) sp.links.push_back({l, topo_.link(l).capacity_Bps, 0, 1.0 / links.size()});
        return sp;
    }

    // cyclic: `span` caps the hyperperiod; otherwise it is the horizon.
    Built assemble(const std::vector<int>& per, const std::vector<int>& fixed, std::int64_t span, long origin,
                   bool cyclic) const {
        Built b;
        b.sp = empty_problem();
        // Kept apart only where some job never holds: the common case pays nothing.
        const bool measuring =
            std::any_of(pb_.jobs.begin(), pb_.jobs.end(), [](const JobProfile& j) { return !j.holds; });
        if (measuring) b.holding_mix.resize(b.sp.links.size());
        b.sp.cyclic = cyclic;
        b.origin = origin;
        for (size_t i = 0; i < pb_.jobs.size(); ++i) {
            const JobProfile& j = pb_.jobs[i];
            if (per[i] <= 0) {
                for (size_t k = 0; k < b.sp.links.size(); ++k) {
                    double peak = peak_load(b.sp, j, static_cast<int>(k));
                    if (peak <= 0) continue;
                    const double duty = average_load(b.sp, j, static_cast<int>(k)) / peak;
                    add_free_job(b.sp.links[k], peak, duty);
                    if (measuring && j.holds) {
                        SlotLink only = b.sp.links[k];
                        only.background_mix = b.holding_mix[k];
                        add_free_job(only, peak, duty);
                        b.holding_mix[k] = std::move(only.background_mix);
                    }
                }
                if (fixed[i] == 0) b.free_owned.push_back(i);
                continue;
            }
            int at = add_slot_job(b.sp, j, per[i], 0, tune_.max_shifts);
            b.job_of.push_back(i);
            int warm = -1;
            auto f = pb_.fixed.find(j.id);
            if (f != pb_.fixed.end()) {
                b.sp.jobs[at].fixed_shift = decision_shift(f->second, opts_.slot_s, per[i], origin);
            } else {
                auto p = pb_.previous.find(j.id);
                if (p != pb_.previous.end() && decision_period(p->second, opts_.slot_s) == per[i])
                    warm = decision_shift(p->second, opts_.slot_s, per[i], origin);
            }
            b.warm.push_back(b.sp.jobs[at].fixed_shift >= 0 ? b.sp.jobs[at].fixed_shift : warm);
        }
        rate_weights(b.sp);
        if (cyclic) finalize_hyperperiod(b.sp, span);
        else b.sp.hyperperiod_slots = static_cast<int>(span);
        choose_shifts(b.sp, b.warm, tune_.max_shifts);
        return b;
    }

    PolicyOptions opts_;   // slot_s: the leaf's grid (grid_slot_s)
    const LocalTuning& tune_;
    const Topology& topo_;
    const LeafProblem& pb_;
};

}  // namespace

namespace {

SlotSolution search(const SlotProblem& sp, const LocalTuning& t, double budget_s, const std::vector<int>* warm,
                    SearchStats* st) {
    int open = 0;
    for (const SlotJob& j : sp.jobs) open += j.fixed_shift < 0;
    // Three quarters of the budget to the search, the rest to the off-grid polish.
    const double main_s = budget_s * 0.75;
    SlotSolution s = open <= t.exact_max_jobs ? solve_exact(sp, main_s, warm, st) : solve_greedy(sp, main_s, warm, st);
    // Polish collisions away off the grid; when none is left (found on the
    // grid or by the polish, which puts bursts flush against each other),
    // pack the bursts with margins so a newcomer finds one gap.
    if (s.cost > stretch_only(sp) + 1e-12) s = refine_with_anchors(sp, s, budget_s - main_s, st);
    if (s.cost > stretch_only(sp) + 1e-12) return s;
    return compact_bursts(sp, s, t.guard);
}

// Last epoch's schedule, with jobs that have none placed around it.
SlotSolution keep_previous(const SlotProblem& sp, const std::vector<int>& warm, const LocalTuning& t, double budget_s,
                           SearchStats* st) {
    bool complete = std::all_of(warm.begin(), warm.end(), [](int s) { return s >= 0; });
    if (complete) return {warm, predicted_cost(sp, warm), false, 0};
    SlotProblem sub = sp;
    for (size_t i = 0; i < sub.jobs.size(); ++i)
        if (warm[i] >= 0) sub.jobs[i].fixed_shift = warm[i];
    SlotSolution s = search(sub, t, budget_s, nullptr, st);
    s.optimal = false;
    return s;
}

}  // namespace

namespace {

// Whether every job of a plan absorbs the collisions the plan still predicts
// within its own slack (P_j - T_j). A gated job whose iterations run later
// than its period drifts off its slots until it loses one, and the plan then
// falls apart; one whose delay fits its slack stays on its grid, so what the
// plan predicts is what happens.
bool delays_fit_slack(const SlotProblem& p, const std::vector<int>& shift, double margin) {
    const std::vector<double> delay = collision_delays_s(p, shift);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const SlotJob& j = p.jobs[i];
        if (j.isolated_period_s <= 0) continue;
        const double slack_s = j.period_slots * p.slot_s - j.isolated_period_s;
        if (delay[i] > margin * slack_s + 1e-12) return false;
    }
    return true;
}

// A plan's problem without the jobs that run free and never hold (measuring
// only); needs some (b.holding_mix not empty).
SlotProblem without_measuring(const Built& b) {
    SlotProblem q = b.sp;
    for (size_t k = 0; k < q.links.size(); ++k) q.links[k].background_mix = b.holding_mix[k];
    return q;
}

// Per job of the leaf problem (n of them), the least period that absorbs
// the collision delay a plan predicts for it within `margin` of its slack
// (T_j + delay / margin), and at least the plan's own; 0 for jobs the plan
// does not place or another leaf decided.
std::vector<double> absorbing_periods(const Built& b, const std::vector<int>& shift, size_t n, double margin) {
    const std::vector<double> delay = collision_delays_s(b.sp, shift);
    std::vector<double> out(n, 0);
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
        const SlotJob& j = b.sp.jobs[k];
        if (j.fixed_shift >= 0 || j.isolated_period_s <= 0) continue;
        out[b.job_of[k]] = std::max(j.period_slots * b.sp.slot_s, j.isolated_period_s + delay[k] / margin);
    }
    return out;
}

enum class Verdict { NotSearched, PastSlack, NoBetter, Taken };

// Rounds of placing a measuring job where it locks and the gated jobs again around it.
constexpr int kLockRounds = 3;

// One plan searched: its best assignment, and whether that is simply last
// epoch's schedule kept.
struct Searched {
    SlotSolution sol;
    bool kept = false;
    bool open = false;   // the plan has jobs of this leaf to place
    bool calm = false;   // no collision is possible at all
};

Searched search_plan(const Built& b, const LocalTuning& t, double budget_s, double threshold, SearchStats* st) {
    Searched out;
    for (const SlotJob& j : b.sp.jobs) out.open = out.open || j.fixed_shift < 0;
    if (!out.open) return out;
    out.calm = contention_free(b.sp);
    bool had_previous = false;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) had_previous = had_previous || (b.sp.jobs[k].fixed_shift < 0 && b.warm[k] >= 0);
    if (!had_previous) {
        out.sol = search(b.sp, t, budget_s, nullptr, st);
        return out;
    }
    SlotSolution keep = keep_previous(b.sp, b.warm, t, budget_s / 2, st);
    out.sol = search(b.sp, t, budget_s / 2, &keep.shift, st);
    // Running jobs move only for a gain worth the disruption.
    if (out.sol.cost >= keep.cost - threshold) {
        out.sol = keep;
        out.kept = std::all_of(b.warm.begin(), b.warm.end(), [](int s) { return s >= 0; });
    }
    return out;
}

// Whether any decision differs from last epoch's.
bool changed_from(const LeafProblem& problem, const std::map<JobId, JobDecision>& jobs) {
    for (const auto& [id, dec] : jobs) {
        auto p = problem.previous.find(id);
        if (p == problem.previous.end() || !same_schedule(p->second, dec)) return true;
    }
    return false;
}

// The owned jobs' decisions: gated as `b` places them at `shift` (none when
// `b` has no jobs), the rest free.
void emit_decisions(const Built& b, const std::vector<int>& shift, const LeafProblem& problem, LeafResult& res) {
    if (!b.sp.jobs.empty()) {
        const std::vector<int> late = late_slack_slots(b.sp, shift, kDefaultLateTolerance);
        for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
            if (b.sp.jobs[k].fixed_shift >= 0) continue;
            JobDecision dec;
            dec.gated = true;
            dec.period_s = b.sp.jobs[k].period_slots * b.sp.slot_s;  // the leaf's grid, maybe coarser
            dec.shift_s = shift[k] * b.sp.slot_s;
            dec.origin_s = b.origin * b.sp.slot_s;
            dec.late_s = late[k] * b.sp.slot_s;
            dec.owner_leaf = problem.leaf;
            res.jobs[problem.jobs[b.job_of[k]].id] = dec;
        }
    }
    for (const JobProfile& j : problem.jobs) {
        if (problem.fixed.count(j.id) || res.jobs.count(j.id)) continue;
        JobDecision dec;
        dec.owner_leaf = problem.leaf;
        res.jobs[j.id] = dec;
        res.free_jobs++;
    }
    res.changed = changed_from(problem, res.jobs);
}

}  // namespace

LeafResult LocalScheduler::decide_plans(const Topology& topo, const LeafProblem& problem) const {
    const auto t0 = std::chrono::steady_clock::now();
    LeafResult res;
    const LeafBuilder builder(opts_, tuning_, topo, problem);
    bool was_free = true, any_owned = false;
    for (const JobProfile& j : problem.jobs) {
        if (problem.fixed.count(j.id)) continue;
        any_owned = true;
        auto p = problem.previous.find(j.id);
        was_free = was_free && p != problem.previous.end() && !p->second.gated;
    }
    char line[160];
    if (builder.cannot_collide()) {
        res.predicted_cost = builder.calm_free_cost();
        std::snprintf(line, sizeof line, "free %.4f%s; no collision possible; all free", res.predicted_cost,
                      was_free ? " (kept)" : "");
        res.explain = line;
        res.optimal = true;
        emit_decisions(Built{}, {}, problem, res);
        res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return res;
    }
    Plans plans = builder.build();
    Built absorbing;   // searched only when the harmonic plan meets measuring jobs past the slack
    Searched absorbing_search;
    const double thr = opts_.change_threshold;
    SearchStats st;
    st.work_per_s = opts_.search_work_per_s;
    // The searches get 60% of the leaf's budget (90% when an absorbing plan
    // is searched too); building the plans is the rest.
    // A gated plan costs at least its stretch: when running free is already
    // cheaper than that (with the change threshold in the gated plan's
    // favour), the plan is not searched at all.
    const double free_score = plans.all_free_cost - (was_free ? thr : 0);
    auto worth = [&](const Built& b) { return stretch_only(b.sp) - thr < free_score; };
    Searched h;
    if (worth(plans.harmonic)) h = search_plan(plans.harmonic, tuning_, opts_.local_budget_s * 0.3, thr, &st);
    else h.calm = contention_free(plans.harmonic.sp);
    // Nothing can collide: nobody needs a gate.
    bool calm = h.calm && plans.harmonic.free_owned.empty();
    Searched d;
    // Drifting can only beat a collision-free harmonic plan by its smaller
    // stretch: not worth a second search.
    bool harmonic_clean = h.open && plans.harmonic.free_owned.empty() &&
                          h.sol.cost <= stretch_only(plans.harmonic.sp) + 1e-9;
    // Drifting is the way out for jobs that cannot share a hyperperiod: when
    // the harmonic plan gates every owned job, its cyclic prediction holds for
    // ever, while a drift plan only looks a horizon ahead and near-identical
    // jobs at periods of their own slide through each other after it.
    bool harmonic_places_all = h.open && plans.harmonic.free_owned.empty();
    if (!calm && any_owned && !harmonic_clean && !harmonic_places_all && worth(plans.drift))
        d = search_plan(plans.drift, tuning_, opts_.local_budget_s * 0.3, thr, &st);
    // Keeping last epoch's way of running counts the change threshold in its favour.
    const Built* chosen = nullptr;
    const Searched* won = nullptr;
    double best = free_score;
    res.predicted_cost = plans.all_free_cost;
    std::snprintf(line, sizeof line, "free %.4f%s", plans.all_free_cost, was_free ? " (kept)" : "");
    res.explain = line;
    std::string verdicts[2];
    if (!calm) {
        // A plan is taken when it beats the best so far, its collisions
        // counted `weight` times, and they fit the jobs' slack (or cost next
        // to nothing).
        auto judge = [&](const Built& b, const Searched& s, double weight, std::string& v) -> Verdict {
            if (!s.open) {
                v = "not searched";
                return Verdict::NotSearched;
            }
            const double stretch = stretch_only(b.sp);
            std::snprintf(line, sizeof line, "%.4f (stretch %.4f%s)", s.sol.cost, stretch, s.kept ? ", kept" : "");
            v = line;
            if (s.sol.cost - stretch > tuning_.max_gated_residual &&
                !delays_fit_slack(b.sp, s.sol.shift, tuning_.slack_margin)) {
                v += " rejected: collisions exceed the slack";
                return Verdict::PastSlack;
            }
            const double score = stretch + weight * (s.sol.cost - stretch) - (s.kept ? thr : 0);
            if (score >= best - 1e-12) {
                v += " no better";
                return Verdict::NoBetter;
            }
            best = score;
            chosen = &b;
            won = &s;
            res.predicted_cost = s.sol.cost;
            return Verdict::Taken;
        };
        const Verdict hv = judge(plans.harmonic, h, 1.0, verdicts[0]);
        judge(plans.drift, d, 1.0, verdicts[1]);
        if (chosen == &plans.harmonic) verdicts[0] += " chosen";
        if (chosen == &plans.drift) verdicts[1] += " chosen";
        res.explain += "; harmonic " + verdicts[0] + "; drift " + verdicts[1];
        // Refused only for collisions with jobs that never hold: periods
        // long enough to absorb them may still beat running free.
        if (!chosen && hv == Verdict::PastSlack && tuning_.absorb_measuring && !plans.harmonic.holding_mix.empty() &&
            delays_fit_slack(without_measuring(plans.harmonic), h.sol.shift, tuning_.slack_margin)) {
            absorbing = builder.harmonic_with_floors(
                absorbing_periods(plans.harmonic, h.sol.shift, problem.jobs.size(), tuning_.slack_margin));
            std::string v = "not searched";
            if (worth(absorbing)) {
                absorbing_search = search_plan(absorbing, tuning_, opts_.local_budget_s * 0.3, thr, &st);
                if (judge(absorbing, absorbing_search, tuning_.absorb_collision_weight, v) == Verdict::Taken) v += " chosen";
            }
            res.explain += "; absorbing " + v;
        }
    } else {
        res.optimal = true;
        res.explain += "; no collision possible";
    }
    res.search_nodes = st.nodes;
    if (!chosen) res.explain += "; all free";
    if (won) res.optimal = won->sol.optimal;
    if (chosen) emit_decisions(*chosen, won->sol.shift, problem, res);
    else emit_decisions(Built{}, {}, problem, res);
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

LeafResult LocalScheduler::decide(const Topology& topo, const LeafProblem& problem) const {
    std::vector<JobId> measuring;   // owned here, hooks that never hold
    for (const JobProfile& j : problem.jobs)
        if (!j.holds && !problem.fixed.count(j.id)) measuring.push_back(j.id);
    if (measuring.empty()) return decide_plans(topo, problem);
    const auto t0 = std::chrono::steady_clock::now();
    // First every way of running them free, the others planned around them.
    LeafProblem around = problem;
    for (JobId id : measuring) {
        around.fixed[id] = JobDecision{};
        around.previous.erase(id);
    }
    LeafResult res = decide_plans(topo, around);
    for (JobId id : measuring) {
        JobDecision dec;
        dec.owner_leaf = problem.leaf;
        res.jobs[id] = dec;
        res.free_jobs++;
    }
    // One job at a time, on a leaf that plans every gated job it sees: two
    // free jobs also drift against each other until both lock, which each
    // one's lock points (against the others fixed) miss, and a job gated by
    // another leaf sits where that leaf planned it without this lock. Both
    // measured as losses without the rule (doc/scale.md, stop 28). A lock
    // already in place goes on beside them: those leaves planned around it,
    // and dropping it for their plans made two leaves take turns for ever
    // (doc/testbed.md, "A job that only measures").
    const bool fixed_elsewhere =
        std::any_of(problem.fixed.begin(), problem.fixed.end(), [](const auto& f) { return f.second.gated; });
    auto last = measuring.size() == 1 ? problem.previous.find(measuring[0]) : problem.previous.end();
    const bool locked = last != problem.previous.end() && last->second.gated;
    if (!tuning_.lock_measuring) {
    } else if (measuring.size() > 1) {
        res.explain += "; lock: more than one measuring job";
    } else if (fixed_elsewhere && !locked) {
        res.explain += "; lock: jobs gated by other leaves";
    } else {
        try_lock(topo, problem, measuring[0], res);
    }
    res.changed = changed_from(problem, res.jobs);
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

// The harmonic plan with the measuring job on the grid too, at the worst
// point it may lock to (lock_points.h), the gated jobs searched around it.
void LocalScheduler::try_lock(const Topology& topo, const LeafProblem& problem, JobId measuring,
                              LeafResult& res) const {
    const LeafBuilder builder(opts_, tuning_, topo, problem);
    const Built b = builder.harmonic_with_floors(std::vector<double>(problem.jobs.size(), 0));
    size_t m = b.sp.jobs.size();
    for (size_t k = 0; k < b.sp.jobs.size(); ++k)
        if (b.sp.jobs[k].id == measuring) m = k;
    if (m == b.sp.jobs.size()) {
        res.explain += "; lock: no common period";
        return;
    }
    // Its stretch alone must beat what was chosen (collisions only add).
    if (stretch_only(b.sp) - opts_.change_threshold >= res.predicted_cost) {
        res.explain += "; lock not searched";
        return;
    }
    SearchStats st;
    st.work_per_s = opts_.search_work_per_s;
    const double lead_s = b.sp.jobs[m].period_slots * b.sp.slot_s - b.sp.jobs[m].isolated_period_s;
    // The job where it will lock (the worst point it may come to rest), then,
    // for up to `rounds` - 1 rounds, the gated jobs searched again around
    // that point, until their delays fit their slack (the locked job's own
    // delay is its lead, by definition). Empty when it does not settle so.
    auto settle = [&](std::vector<int>& shift, int rounds) -> std::string {
        SlotProblem around = b.sp;
        std::string why;
        for (int round = 0; round < rounds; ++round) {
            around.jobs[m].fixed_shift = -1;
            const std::vector<int> points = lock_points(delay_by_shift(around, shift, m), lead_s);
            if (points.empty()) return "job " + std::to_string(measuring) + " never settles";
            double worst_cost = -1;
            int worst = points[0];
            for (int x : points) {
                shift[m] = x;
                if (const double c = predicted_cost(around, shift); c > worst_cost) {
                    worst_cost = c;
                    worst = x;
                }
            }
            shift[m] = worst;
            why.clear();
            const std::vector<double> delay = collision_delays_s(around, shift);
            for (size_t k = 0; k < around.jobs.size() && why.empty(); ++k) {
                const SlotJob& j = around.jobs[k];
                if (k != m && j.isolated_period_s > 0 &&
                    delay[k] > tuning_.slack_margin * (j.period_slots * around.slot_s - j.isolated_period_s) + 1e-12)
                    why = "job " + std::to_string(j.id) + " past its slack";
            }
            if (why.empty() || round + 1 == rounds) break;
            around.jobs[m].fixed_shift = shift[m];
            shift = search(around, tuning_, opts_.local_budget_s * 0.1, &shift, &st).shift;
        }
        return why;
    };
    const double stretch = stretch_only(b.sp);
    auto score = [&](const std::vector<int>& shift) {
        return stretch + tuning_.absorb_collision_weight * (predicted_cost(b.sp, shift) - stretch);
    };
    std::vector<int> shift = search_plan(b, tuning_, opts_.local_budget_s * 0.3, opts_.change_threshold, &st).sol.shift;
    std::string why = settle(shift, kLockRounds);
    // Last epoch's lock plan, still settling as it stands, stays unless the
    // new one is better by the change threshold: re-searched every epoch,
    // plans of equal cost would move the running jobs for nothing.
    bool kept = false;
    std::vector<int> previous = b.warm;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k)
        if (b.sp.jobs[k].fixed_shift >= 0) previous[k] = b.sp.jobs[k].fixed_shift;
    auto p = problem.previous.find(measuring);
    const bool was_locked = p != problem.previous.end() && p->second.gated &&
                            std::all_of(previous.begin(), previous.end(), [](int x) { return x >= 0; });
    if (was_locked && settle(previous, 1).empty() &&
        (!why.empty() || score(shift) >= score(previous) - opts_.change_threshold)) {
        shift = previous;
        why.clear();
        kept = true;
    }
    res.search_nodes += st.nodes;
    if (!why.empty()) {
        res.explain += "; lock: " + why;
        return;
    }
    // Judged like the absorbing plan: collisions with a job nobody holds count twice.
    const double cost = predicted_cost(b.sp, shift);
    char line[96];
    std::snprintf(line, sizeof line, "; lock %.4f (stretch %.4f%s)", cost, stretch, kept ? ", kept" : "");
    res.explain += line;
    if (score(shift) - (kept ? opts_.change_threshold : 0) >= res.predicted_cost - 1e-12) {
        res.explain += " no better";
        return;
    }
    res.explain += " chosen";
    res.jobs.clear();
    res.free_jobs = 0;
    res.predicted_cost = cost;
    res.optimal = false;
    emit_decisions(b, shift, problem, res);
}

std::map<JobId, double> LocalScheduler::collision_delays(const Topology& topo, const LeafProblem& problem) const {
    const Built b = LeafBuilder(opts_, tuning_, topo, problem).decided();
    const std::vector<double> delay = collision_delays_s(b.sp, b.warm);
    std::map<JobId, double> out;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) out[problem.jobs[b.job_of[k]].id] = delay[k];
    return out;
}

}  // namespace harmonics
