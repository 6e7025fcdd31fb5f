#include "policy/burst_packing.h"

#include "policy/slot_state.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace harmonics {
namespace {

// One burst of a job on one link: slots [start, end) of its period (end may
// pass the period's end) and the job's peak demand on that link.
struct LinkBurst {
    int link, start, end;
    double peak;
};

std::vector<LinkBurst> link_bursts(const SlotJob& j) {
    std::vector<LinkBurst> out;
    const int P = j.period_slots;
    for (const SlotDemand& d : j.demand) {
        const double peak = *std::max_element(d.pattern.begin(), d.pattern.end());
        const bool always = std::all_of(d.pattern.begin(), d.pattern.end(), [](double v) { return v > 0; });
        if (peak <= 0 || always) continue;  // a link busy all period has no edges to keep clear
        for (int t = 0; t < P; ++t) {
            if (!(d.pattern[t] > 0) || d.pattern[(t + P - 1) % P] > 0) continue;
            int e = t + 1;
            while (d.pattern[e % P] > 0) ++e;
            out.push_back({d.link, t, e, peak});
        }
    }
    return out;
}

// Whether job i's burst `b` could not share slot tau of the hyperperiod:
// another gated job loads the link there (free-running jobs are background,
// the same in every slot) and the load with b's peak exceeds the capacity.
// Job i must be out of `st`.
bool blocked(const SlotProblem& p, const LoadState& st, const LinkBurst& b, long tau) {
    const int H = p.hyperperiod_slots;
    const double x = st.load(b.link, static_cast<int>(((tau % H) + H) % H));
    return x > p.links[b.link].background + 1e-9 && x + b.peak > 1 + 1e-9;
}

// Slots between job i's bursts (at shift s) and the nearest slot where it
// could not share its link, looking at most `cap` slots ahead (and behind,
// unless ahead_only). Job i must be out of `st`. Overlaps are the excess's
// business, not this one's.
int clearance(const SlotProblem& p, const LoadState& st, const std::vector<LinkBurst>& bursts, int P, int s, int cap,
              bool ahead_only = false) {
    const int H = p.hyperperiod_slots;
    int clear = cap;
    for (const LinkBurst& b : bursts)
        for (long m = 0; m * P < H && clear > 0; ++m) {
            const long a = s + b.start + m * P, e = s + b.end + m * P;
            for (int d = 1; !ahead_only && d <= clear; ++d)
                if (blocked(p, st, b, a - d)) clear = d - 1;
            for (int d = 0; d < clear; ++d)
                if (blocked(p, st, b, e + d)) clear = d;
        }
    return clear;
}

// A few passes over the open jobs: one closer than its margin to another
// job's burst moves by at most the margin to the shift whose clearance is
// largest, when that adds no excess. Ties keep the smaller move.
void spread_bursts(const SlotProblem& p, LoadState& st, std::vector<int>& shift, double margin) {
    std::vector<std::vector<LinkBurst>> bursts;
    for (const SlotJob& j : p.jobs) bursts.push_back(link_bursts(j));
    bool moved = true;
    for (int pass = 0; moved && pass < 3; ++pass) {
        moved = false;
        for (size_t i = 0; i < p.jobs.size(); ++i) {
            if (p.jobs[i].fixed_shift >= 0 || bursts[i].empty()) continue;
            const int P = p.jobs[i].period_slots;
            const int gap = std::min(static_cast<int>(std::ceil(margin * P - 1e-9)), P / 2);
            if (gap <= 0) continue;
            const double cur = -st.apply(i, shift[i], -1);
            int best = shift[i];
            int best_clear = clearance(p, st, bursts[i], P, shift[i], gap);
            for (int d = 1; d <= gap && best_clear < gap; ++d)
                for (int s : {shift[i] - d, shift[i] + d}) {
                    s = ((s % P) + P) % P;
                    if (st.delta(i, s) > cur + 1e-12) continue;
                    const int c = clearance(p, st, bursts[i], P, s, gap);
                    if (c > best_clear) {
                        best_clear = c;
                        best = s;
                    }
                }
            st.apply(i, best, +1);
            moved = moved || best != shift[i];
            shift[i] = best;
        }
    }
}

}  // namespace

std::vector<int> late_slack_slots(const SlotProblem& p, const std::vector<int>& shift, double cap_frac) {
    return late_slack_slots(p, shift, cap_frac, std::vector<bool>(p.jobs.size(), true));
}

std::vector<int> late_slack_slots(const SlotProblem& p, const std::vector<int>& shift, double cap_frac,
                                  const std::vector<bool>& which) {
    std::vector<int> out(p.jobs.size(), 0);
    if (p.hyperperiod_slots <= 0 || shift.size() != p.jobs.size() || which.size() != p.jobs.size()) return out;
    LoadState st(p);
    for (size_t i = 0; i < p.jobs.size(); ++i) st.apply(i, shift[i], +1);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        if (!which[i]) continue;
        const int P = p.jobs[i].period_slots;
        const int cap = static_cast<int>(std::ceil(cap_frac * P - 1e-9));
        const std::vector<LinkBurst> bursts = link_bursts(p.jobs[i]);
        if (bursts.empty()) {
            out[i] = cap;
            continue;
        }
        st.apply(i, shift[i], -1);
        out[i] = clearance(p, st, bursts, P, shift[i], cap, true);
        st.apply(i, shift[i], +1);
    }
    return out;
}

SlotSolution compact_bursts(const SlotProblem& p, const SlotSolution& start, double margin) {
    if (p.hyperperiod_slots <= 0 || start.shift.size() != p.jobs.size()) return start;
    LoadState st(p);
    std::vector<int> shift = start.shift;
    for (size_t i = 0; i < p.jobs.size(); ++i) st.apply(i, shift[i], +1);
    // Every job in order of shift; open ones move up against their predecessor
    // (open or fixed).
    std::vector<size_t> order(p.jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return shift[a] < shift[b]; });
    const double before = st.excess();
    std::vector<Bursts> b;
    for (const SlotJob& j : p.jobs) b.push_back(bursts_of(j));
    // A move can be blocked by a successor that has not moved yet: a few
    // passes, at most one per job, until nothing moves.
    bool moved = true;
    for (size_t pass = 0; moved && pass < order.size(); ++pass) {
        moved = false;
        for (size_t k = 1; k < order.size(); ++k) {
            const size_t prev = order[k - 1], i = order[k];
            if (p.jobs[i].fixed_shift >= 0) continue;
            const Bursts &bp = b[prev], &bi = b[i];
            if (bp.ends.empty() || bi.starts.empty()) continue;
            const int P = p.jobs[i].period_slots;
            // A margin after the predecessor's burst: a job released a hair
            // late (the OS, a straggling rank) must not run into the next
            // one's slot.
            const int gap = static_cast<int>(std::ceil(margin * P - 1e-9));
            int target = ((shift[prev] + bp.ends.back() + gap - bi.starts.front()) % P + P) % P;
            if (target == shift[i]) continue;
            double cur = -st.apply(i, shift[i], -1);
            if (st.delta(i, target) <= cur + 1e-12) {
                shift[i] = target;
                moved = true;
            }
            st.apply(i, shift[i], +1);
        }
    }
    spread_bursts(p, st, shift, margin);
    SlotSolution sol = start;
    if (st.excess() <= before + 1e-12) {
        sol.shift = shift;
        sol.cost = stretch_cost(p) + st.excess() / p.hyperperiod_slots;
    }
    return sol;
}

}  // namespace harmonics
