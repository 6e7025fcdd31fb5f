// Greedy + local search and branch and bound over the slot-grid problem, both
// on an incremental load state: placing a job at a shift touches only the
// slots where it communicates.
#include "policy/slot_search.h"
#include "policy/slot_state.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <limits>
#include <numeric>

namespace harmonics {
namespace {

using Clock = std::chrono::steady_clock;

// When a search stops: budget_s of wall time from now, or, when the stats
// say so (SearchStats::work_per_s > 0), once their work meter has counted
// budget_s' worth of slot loads from now.
class Deadline {
public:
    Deadline(double budget_s, const SearchStats& ss) {
        if (ss.work_per_s > 0) {
            work_ = &ss.work;
            limit_ = ss.work + static_cast<std::int64_t>(std::max(0.0, budget_s) * ss.work_per_s);
        } else {
            at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget_s));
        }
    }
    bool passed() const { return work_ ? *work_ > limit_ : Clock::now() > at_; }

private:
    const std::int64_t* work_ = nullptr;
    std::int64_t limit_ = 0;
    Clock::time_point at_;
};

// A load state whose slot loads count into the search's work meter.
LoadState metered(const SlotProblem& p, SearchStats& ss) {
    LoadState st(p);
    st.meter(&ss.work);
    return st;
}

// Variable jobs, heaviest first (they have the fewest good places).
std::vector<size_t> search_order(const SlotProblem& p, const LoadState& st) {
    std::vector<size_t> order;
    for (size_t i = 0; i < p.jobs.size(); ++i)
        if (p.jobs[i].fixed_shift < 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return st.job_weight(a) > st.job_weight(b); });
    return order;
}

void place_fixed(const SlotProblem& p, LoadState& st, std::vector<int>& shift) {
    for (size_t i = 0; i < p.jobs.size(); ++i)
        if (p.jobs[i].fixed_shift >= 0) {
            shift[i] = p.jobs[i].fixed_shift;
            st.apply(i, shift[i], +1);
        }
}

// The candidate of job i adding the least excess (first such on ties, or
// `prefer` when it ties with the best), trying every `stride`-th candidate.
// With a `deadline`, the best of those tried by then (not a bound: branch
// and bound passes none).
int best_shift(const SlotProblem& p, const LoadState& st, size_t i, int prefer, double* best_delta,
               const Deadline* deadline = nullptr, size_t stride = 1) {
    int best = -1;
    double bd = std::numeric_limits<double>::infinity();
    if (prefer >= 0) {
        best = prefer;
        bd = st.delta(i, prefer);
    }
    const std::vector<int>& c = p.jobs[i].shifts;
    int tried = 0;
    for (size_t k = 0; k < c.size(); k += stride) {
        if (bd <= 1e-12) break;
        if (deadline && best >= 0 && (++tried & 7) == 0 && deadline->passed()) break;
        double d = st.delta(i, c[k]);
        if (d < bd - 1e-12) {
            bd = d;
            best = c[k];
        }
    }
    if (best_delta) *best_delta = bd;
    return best;
}

// A place for job i once the budget is spent: the best of at most
// kLateCandidates of its candidates, spread over the list.
constexpr size_t kLateCandidates = 8;
int late_shift(const SlotProblem& p, const LoadState& st, size_t i) {
    const size_t n = p.jobs[i].shifts.size();
    return best_shift(p, st, i, -1, nullptr, nullptr, (n + kLateCandidates - 1) / kLateCandidates);
}

// Best response for every job in turn until none moves or time is up.
void local_search(const SlotProblem& p, LoadState& st, std::vector<int>& shift, const std::vector<size_t>& order,
                  const Deadline& deadline, SearchStats& stats) {
    bool moved = true;
    while (moved) {
        moved = false;
        for (size_t i : order) {
            if (deadline.passed()) return;
            double cur = -st.apply(i, shift[i], -1);
            double bd = 0;
            int s = best_shift(p, st, i, shift[i], &bd, &deadline);
            stats.nodes++;
            if (bd < cur - 1e-12) moved = true;
            shift[i] = s;
            st.apply(i, s, +1);
        }
    }
}

struct Greedy {
    std::vector<int> shift;
    double excess;
};

Greedy greedy_from(const SlotProblem& p, const std::vector<int>* start, const Deadline& deadline,
                   SearchStats& stats) {
    LoadState st = metered(p, stats);
    std::vector<int> shift(p.jobs.size(), 0);
    place_fixed(p, st, shift);
    std::vector<size_t> order = search_order(p, st);
    // Every job is placed, whatever the clock says: a plan with jobs dropped
    // on their first candidate piles them onto one slot, its prediction is
    // rejected and the leaf runs free (7 jobs of 4.5 s periods on a 2 ms grid
    // took 0.6 ms to place; at a 0.3 ms budget they all ran free). Past the
    // deadline a job chooses among a few candidates spread over its period,
    // which bounds the overrun.
    for (size_t i : order) {
        if (start) shift[i] = (*start)[i];
        else if (!deadline.passed()) shift[i] = best_shift(p, st, i, -1, nullptr);
        else shift[i] = late_shift(p, st, i);
        st.apply(i, shift[i], +1);
    }
    local_search(p, st, shift, order, deadline, stats);
    return {shift, st.excess()};
}

bool valid_warm(const SlotProblem& p, const std::vector<int>* warm) {
    if (!warm || warm->size() != p.jobs.size()) return false;
    for (size_t i = 0; i < p.jobs.size(); ++i)
        if ((*warm)[i] < 0 || (*warm)[i] >= p.jobs[i].period_slots) return false;
    return true;
}

}  // namespace

SlotSolution solve_greedy(const SlotProblem& p, double budget_s, const std::vector<int>* warm, SearchStats* stats) {
    SearchStats local;
    SearchStats& ss = stats ? *stats : local;
    const Deadline deadline(budget_s, ss);
    // From last epoch's shifts when there are any (local search from there);
    // from scratch as well only while the problem is small enough for both
    // and the budget is not spent (a second placement would overrun it).
    Greedy best;
    const bool has_warm = valid_warm(p, warm);
    if (has_warm) best = greedy_from(p, warm, deadline, ss);
    if (!has_warm || (p.jobs.size() <= 16 && !deadline.passed())) {
        Greedy g = greedy_from(p, nullptr, deadline, ss);
        if (!has_warm || g.excess < best.excess - 1e-12) best = std::move(g);
    }
    ss.completed = !deadline.passed();
    SlotSolution sol;
    sol.shift = best.shift;
    sol.cost = stretch_cost(p) + (p.hyperperiod_slots > 0 ? best.excess / p.hyperperiod_slots : 0);
    return sol;
}

namespace {

class BranchAndBound {
public:
    BranchAndBound(const SlotProblem& p, const Deadline& deadline, SearchStats& stats)
        : p_(p), st_(metered(p, stats)), deadline_(deadline), stats_(stats), shift_(p.jobs.size(), 0) {
        place_fixed(p, st_, shift_);
        order_ = search_order(p, st_);
        // All shifts of a rotation give the same cost when nothing is fixed
        // and every job may take every slot: pin the first job to slot 0.
        bool any_fixed = order_.size() != p.jobs.size();
        bool full = true;
        for (size_t i : order_) full = full && static_cast<int>(p.jobs[i].shifts.size()) == p.jobs[i].period_slots;
        pin_first_ = p.cyclic && !any_fixed && full && !order_.empty();
    }

    void run(std::vector<int> incumbent, double incumbent_excess) {
        best_ = std::move(incumbent);
        best_excess_ = incumbent_excess;
        dfs(0);
    }
    bool aborted() const { return aborted_; }
    const std::vector<int>& best() const { return best_; }
    double best_excess() const { return best_excess_; }

private:
    void dfs(size_t depth) {
        if (aborted_) return;
        ++stats_.nodes;
        if (deadline_.passed()) {  // a node costs far more than reading the clock
            aborted_ = true;
            return;
        }
        if (depth == order_.size()) {
            if (st_.excess() < best_excess_ - 1e-12) {
                best_excess_ = st_.excess();
                best_ = shift_;
            }
            return;
        }
        // Least excess each open job could still add, against today's loads.
        double rest = 0;
        for (size_t d = depth + 1; d < order_.size(); ++d) {
            double m = 0;
            best_shift(p_, st_, order_[d], -1, &m);
            rest += m;
        }
        const size_t i = order_[depth];
        std::vector<std::pair<double, int>> kids;
        if (depth == 0 && pin_first_) {
            kids.push_back({st_.delta(i, 0), 0});
        } else {
            for (int s : p_.jobs[i].shifts) kids.push_back({st_.delta(i, s), s});
            std::stable_sort(kids.begin(), kids.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
        }
        for (const auto& [d, s] : kids) {
            if (st_.excess() + d + rest >= best_excess_ - 1e-12) break;
            shift_[i] = s;
            st_.apply(i, s, +1);
            dfs(depth + 1);
            st_.apply(i, s, -1);
            if (aborted_) return;
        }
    }

    const SlotProblem& p_;
    LoadState st_;
    const Deadline& deadline_;
    SearchStats& stats_;
    std::vector<int> shift_;
    std::vector<size_t> order_;
    bool pin_first_ = false;
    std::vector<int> best_;
    double best_excess_ = 0;
    bool aborted_ = false;
};

}  // namespace

SlotSolution solve_exact(const SlotProblem& p, double budget_s, const std::vector<int>* warm, SearchStats* stats) {
    SearchStats local;
    SearchStats& ss = stats ? *stats : local;
    const Deadline deadline(budget_s, ss);
    SlotSolution start = solve_greedy(p, budget_s, warm, &ss);
    const int H = p.hyperperiod_slots;
    const double base = stretch_cost(p);
    double start_excess = H > 0 ? (start.cost - base) * H : 0;
    // Recompute exactly to avoid drift from the cost's division.
    {
        LoadState st = metered(p, ss);
        for (size_t i = 0; i < p.jobs.size(); ++i) st.apply(i, start.shift[i], +1);
        start_excess = st.excess();
    }
    BranchAndBound bb(p, deadline, ss);
    bb.run(start.shift, start_excess);
    SlotSolution sol;
    sol.shift = bb.best();
    sol.cost = base + (H > 0 ? bb.best_excess() / H : 0);
    sol.optimal = !bb.aborted();
    ss.completed = sol.optimal;
    return sol;
}

namespace {

// Shifts of job i that put one of its bursts right after, or right before,
// a burst of another job at its current shift.
// Marked in a bitmap of the period, so the list never outgrows P however many
// bursts the other jobs have over the hyperperiod; stops at `deadline`.
std::vector<int> anchor_shifts(const SlotProblem& p, const std::vector<Bursts>& b, const std::vector<int>& shift,
                               size_t i, const Deadline& deadline) {
    const int P = p.jobs[i].period_slots, H = p.hyperperiod_slots;
    std::vector<char> mark(P, 0);
    auto add = [&](long tau) { mark[((tau % P) + P) % P] = 1; };
    for (size_t k = 0; k < p.jobs.size(); ++k) {
        if (k == i) continue;
        if ((k & 15) == 0 && deadline.passed()) break;
        const int Pk = p.jobs[k].period_slots;
        for (int m = 0; m * Pk < H; ++m) {
            for (int e : b[k].ends)
                for (int s0 : b[i].starts) add(static_cast<long>(shift[k]) + e + m * Pk - s0);
            for (int s1 : b[k].starts)
                for (int e0 : b[i].ends) add(static_cast<long>(shift[k]) + s1 + m * Pk - e0);
        }
    }
    std::vector<int> out;
    for (int t = 0; t < P; ++t)
        if (mark[t]) out.push_back(t);
    return out;
}

}  // namespace

SlotSolution refine_with_anchors(const SlotProblem& p, const SlotSolution& start, double budget_s, SearchStats* stats) {
    SearchStats local;
    SearchStats& ss = stats ? *stats : local;
    const Deadline deadline(budget_s, ss);
    if (p.hyperperiod_slots <= 0 || start.shift.size() != p.jobs.size()) return start;
    std::vector<Bursts> b;
    for (const SlotJob& j : p.jobs) b.push_back(bursts_of(j));
    LoadState st = metered(p, ss);
    std::vector<int> shift = start.shift;
    for (size_t i = 0; i < p.jobs.size(); ++i) st.apply(i, shift[i], +1);
    std::vector<size_t> order = search_order(p, st);
    const double before = st.excess();
    bool moved = true;
    for (int pass = 0; moved && pass < 8 && !deadline.passed(); ++pass) {
        moved = false;
        for (size_t i : order) {
            if (deadline.passed()) break;
            double cur = -st.apply(i, shift[i], -1);
            int best = shift[i];
            double bd = cur;
            for (int s : anchor_shifts(p, b, shift, i, deadline)) {
                if ((++ss.nodes & 15) == 0 && deadline.passed()) break;
                double d = st.delta(i, s);
                if (d < bd - 1e-12) {
                    bd = d;
                    best = s;
                }
            }
            moved = moved || best != shift[i];
            shift[i] = best;
            st.apply(i, best, +1);
        }
    }
    SlotSolution sol = start;
    if (st.excess() < before - 1e-12) {
        sol.shift = shift;
        sol.cost = stretch_cost(p) + st.excess() / p.hyperperiod_slots;
        sol.optimal = false;  // better than the grid's optimum, so no longer a proof about it
    }
    return sol;
}

}  // namespace harmonics
