// The Local Scheduler's plans built from one leaf's problem (leaf_plans.h).
#include "policy/leaf_plans.h"

#include <algorithm>
#include <map>

#include "policy/free_running.h"

namespace harmonics::local {

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

// The cost of an assignment with no collision at all.
double stretch_only(const SlotProblem& sp) {
    double c = 0;
    for (const SlotJob& j : sp.jobs)
        if (j.isolated_period_s > 0) c += j.period_slots * sp.slot_s / j.isolated_period_s - 1;
    return c;
}

namespace {

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

Plans LeafBuilder::build() const {
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

bool LeafBuilder::cannot_collide() const {
    const SlotProblem sp = empty_problem();
    for (size_t k = 0; k < sp.links.size(); ++k) {
        double peak = 0;
        for (const JobProfile& j : pb_.jobs) peak += peak_load(sp, j, static_cast<int>(k));
        if (peak > 1.0 + 1e-9) return false;
    }
    return true;
}

double LeafBuilder::calm_free_cost() const {
    const std::vector<int> per = fixed_periods();
    double stretch = 0;
    for (size_t i = 0; i < per.size(); ++i) {
        const double T = iteration_period_s(pb_.jobs[i]);
        if (per[i] > 0 && T > 0) stretch += per[i] * opts_.slot_s / T - 1;
    }
    return std::max(stretch, stretch + queued_free_cost(per));
}

Built LeafBuilder::decided() const {
    const std::vector<int> per = fixed_periods();
    std::vector<int> fixed(per.size(), -1);
    std::int64_t longest = 1;
    for (size_t i = 0; i < per.size(); ++i) {
        if (per[i] > 0) fixed[i] = per[i];
        longest = std::max<std::int64_t>(longest, per[i]);
    }
    return assemble(per, fixed, horizon_slots(longest), now_slot(), false);
}

std::vector<int> LeafBuilder::fixed_periods() const {
    std::vector<int> per(pb_.jobs.size(), 0);
    for (size_t i = 0; i < per.size(); ++i) {
        auto f = pb_.fixed.find(pb_.jobs[i].id);
        if (f != pb_.fixed.end()) per[i] = decision_period(f->second, opts_.slot_s);
    }
    return per;
}

LeafBuilder::Targets LeafBuilder::targets(const std::vector<double>* floor_s) const {
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

Built LeafBuilder::harmonic(const Targets& g) const {
    const std::int64_t cap = std::min<std::int64_t>(tune_.max_hyper_slots, g.longest * tune_.hyper_factor);
    std::vector<int> per = periods(g.target, g.with_prev, cap);
    std::vector<int> fresh = periods(g.target, g.fixed, cap);
    if (count_placed(fresh, g.fixed) > count_placed(per, g.fixed)) per = fresh;
    return assemble(per, g.fixed, cap, 0, true);
}

std::int64_t LeafBuilder::horizon_slots(std::int64_t longest) const {
    const std::int64_t h = std::max<std::int64_t>(std::llround(tune_.horizon_s / opts_.slot_s), 2 * longest);
    return std::min<std::int64_t>(h, tune_.max_hyper_slots);
}

double LeafBuilder::grid_slot_s() const {
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

std::vector<int> LeafBuilder::periods(const std::vector<double>& T, const std::vector<int>& fixed, std::int64_t cap) const {
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

void LeafBuilder::share_periods_in_force(const std::vector<double>& T, const std::vector<double>& factor,
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

double LeafBuilder::queued_free_cost(const std::vector<int>& per) const {
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

int LeafBuilder::count_placed(const std::vector<int>& per, const std::vector<int>& fixed) {
    int c = 0;
    for (size_t i = 0; i < per.size(); ++i) c += per[i] > 0 && fixed[i] == 0;
    return c;
}

std::vector<double> LeafBuilder::load_factors() const {
    const std::vector<std::vector<double>> use = link_loads(empty_problem());
    const std::vector<double> rho = offered_loads(use);
    std::vector<double> f(pb_.jobs.size(), 1.0);
    for (size_t i = 0; i < pb_.jobs.size(); ++i)
        for (size_t k = 0; k < rho.size(); ++k)
            if (use[i][k] > 0) f[i] = std::max(f[i], rho[k]);
    return f;
}

std::vector<std::vector<double>> LeafBuilder::link_loads(const SlotProblem& sp) const {
    std::vector<std::vector<double>> use(pb_.jobs.size(), std::vector<double>(sp.links.size(), 0));
    for (size_t i = 0; i < pb_.jobs.size(); ++i)
        for (size_t k = 0; k < sp.links.size(); ++k) use[i][k] = average_load(sp, pb_.jobs[i], static_cast<int>(k));
    return use;
}

std::vector<double> LeafBuilder::offered_loads(const std::vector<std::vector<double>>& use) {
    std::vector<double> rho(use.empty() ? 0 : use[0].size(), 0);
    for (const auto& u : use)
        for (size_t k = 0; k < u.size(); ++k) rho[k] += u[k];
    return rho;
}

void LeafBuilder::rate_weights(SlotProblem& sp) const {
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

SlotProblem LeafBuilder::empty_problem() const {
    SlotProblem sp;
    sp.slot_s = opts_.slot_s;
    std::vector<LinkId> links = leaf_links(topo_, pb_.leaf);
    for (LinkId l : links) sp.links.push_back({l, topo_.link(l).capacity_Bps, 0, 1.0 / links.size()});
    return sp;
}

Built LeafBuilder::assemble(const std::vector<int>& per, const std::vector<int>& fixed, std::int64_t span, long origin,
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

}  // namespace harmonics::local
