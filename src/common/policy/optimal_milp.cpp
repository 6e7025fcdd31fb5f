// The slot-grid MILP, built column-wise and handed to CBC's C interface.
#include "policy/optimal_milp.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string>

namespace harmonics {
namespace {

constexpr double kInf = std::numeric_limits<double>::max();   // CBC's "no bound"

int wrap(int x, int n) { return ((x % n) + n) % n; }

double stretch_penalty(const SlotProblem& p) {
    double c = 0;
    for (const SlotJob& j : p.jobs)
        if (j.isolated_period_s > 0) c += j.period_slots * p.slot_s / j.isolated_period_s - 1;
    return c;
}

// Per link, per slot of the hyperperiod: background plus the fixed jobs.
std::vector<std::vector<double>> fixed_load(const SlotProblem& p) {
    std::vector<std::vector<double>> load(p.links.size());
    for (size_t k = 0; k < p.links.size(); ++k) load[k].assign(p.hyperperiod_slots, p.links[k].background);
    for (const SlotJob& j : p.jobs) {
        if (j.fixed_shift < 0) continue;
        for (const SlotDemand& d : j.demand)
            for (int t = 0; t < p.hyperperiod_slots; ++t)
                load[d.link][t] += d.pattern[wrap(t - j.fixed_shift, j.period_slots)];
    }
    return load;
}

// The incumbent CBC starts from (and the answer if it finds nothing better):
// open jobs, heaviest first, each at the shift adding the least weighted excess.
std::vector<int> greedy_start(const SlotProblem& p) {
    const int H = p.hyperperiod_slots;
    std::vector<std::vector<double>> load = fixed_load(p);
    std::vector<int> shift(p.jobs.size(), 0);
    std::vector<size_t> order;
    std::vector<double> mass(p.jobs.size(), 0);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const SlotJob& j = p.jobs[i];
        if (j.fixed_shift >= 0) {
            shift[i] = j.fixed_shift;
            continue;
        }
        order.push_back(i);
        for (const SlotDemand& d : j.demand) mass[i] += std::accumulate(d.pattern.begin(), d.pattern.end(), 0.0);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mass[a] > mass[b]; });
    for (size_t i : order) {
        const SlotJob& j = p.jobs[i];
        double best = kInf;
        for (int s : j.shifts) {
            double add = 0;
            for (const SlotDemand& d : j.demand) {
                const std::vector<double>& L = load[d.link];
                double w = p.links[d.link].weight;
                for (int t = 0; t < H; ++t) {
                    double x = d.pattern[wrap(t - s, j.period_slots)];
                    if (x > 0) add += w * (std::max(0.0, L[t] + x - 1) - std::max(0.0, L[t] - 1));
                }
            }
            if (add < best - 1e-12) {
                best = add;
                shift[i] = s;
            }
        }
        for (const SlotDemand& d : j.demand)
            for (int t = 0; t < H; ++t) load[d.link][t] += d.pattern[wrap(t - shift[i], j.period_slots)];
    }
    return shift;
}

struct Model {
    std::vector<std::vector<std::pair<int, double>>> col;   // per column: (row, coefficient)
    std::vector<double> obj, col_lb, col_ub, row_lb, row_ub;
    std::vector<char> integer;
    // x column of (problem, job, candidate index); -1 for fixed jobs.
    std::vector<std::vector<int>> first_x;

    int add_col(double c, double lb, double ub, bool is_int) {
        col.emplace_back();
        obj.push_back(c);
        col_lb.push_back(lb);
        col_ub.push_back(ub);
        integer.push_back(is_int);
        return static_cast<int>(col.size()) - 1;
    }
    int add_row(double lb, double ub) {
        row_lb.push_back(lb);
        row_ub.push_back(ub);
        return static_cast<int>(row_lb.size()) - 1;
    }
};

// Links whose rows would be identical (same background, same jobs with the
// same patterns: a leaf's uplink and downlink carry the same rings) are one
// set of rows with their weights summed. Returns (representative link, weight).
std::vector<std::pair<int, double>> distinct_links(const SlotProblem& p) {
    std::map<std::vector<double>, size_t> seen;
    std::vector<std::pair<int, double>> out;
    for (size_t k = 0; k < p.links.size(); ++k) {
        std::vector<double> key{p.links[k].background};
        for (size_t i = 0; i < p.jobs.size(); ++i)
            for (const SlotDemand& d : p.jobs[i].demand)
                if (d.link == static_cast<int>(k)) {
                    key.push_back(-1.0 - static_cast<double>(i));
                    key.insert(key.end(), d.pattern.begin(), d.pattern.end());
                }
        auto [it, fresh] = seen.insert({key, out.size()});
        if (fresh) out.push_back({static_cast<int>(k), p.links[k].weight});
        else out[it->second].second += p.links[k].weight;
    }
    return out;
}

// Adds one problem's columns and rows; returns the part of its cost the model
// leaves out as a constant (excess no shift can change).
double add_problem(Model& m, const SlotProblem& p) {
    double constant = 0;
    std::vector<int> first(p.jobs.size(), -1);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const SlotJob& j = p.jobs[i];
        if (j.fixed_shift >= 0) continue;
        int row = m.add_row(1, 1);
        for (size_t s = 0; s < j.shifts.size(); ++s) {
            int c = m.add_col(0, 0, 1, true);
            if (s == 0) first[i] = c;
            m.col[c].push_back({row, 1.0});
        }
    }
    m.first_x.push_back(first);
    if (p.hyperperiod_slots <= 0) return constant;
    const std::vector<std::vector<double>> base = fixed_load(p);
    for (auto [k, weight] : distinct_links(p)) {
        // A link's load repeats with the lcm of its own jobs' periods, which
        // may be far shorter than the problem's hyperperiod: one row per slot
        // of that, each standing for H/Hk slots.
        std::int64_t Hk = 1;
        std::vector<std::pair<size_t, const SlotDemand*>> on;
        for (size_t i = 0; i < p.jobs.size(); ++i)
            for (const SlotDemand& d : p.jobs[i].demand)
                if (d.link == k) {
                    Hk = lcm_capped(Hk, p.jobs[i].period_slots, p.hyperperiod_slots);
                    if (p.jobs[i].fixed_shift < 0) on.push_back({i, &d});
                }
        const double w = weight / static_cast<double>(Hk);
        if (on.empty()) {   // only fixed load: a constant
            for (int t = 0; t < Hk; ++t) constant += w * std::max(0.0, base[k][t] - 1);
            continue;
        }
        std::vector<std::pair<int, double>> terms;   // (x column, coefficient) in this slot
        for (int t = 0; t < Hk; ++t) {
            double most = 0;
            int contributors = 0;
            terms.clear();
            for (auto& [i, d] : on) {
                const SlotJob& j = p.jobs[i];
                double mx = 0;
                for (size_t s = 0; s < j.shifts.size(); ++s) {
                    double x = d->pattern[wrap(t - j.shifts[s], j.period_slots)];
                    if (x > 0) terms.push_back({first[i] + static_cast<int>(s), x});
                    mx = std::max(mx, x);
                }
                most += mx;
                contributors += mx > 0;
            }
            const double b = base[k][t];
            if (b + most <= 1.0 + 1e-12) continue;   // cannot exceed capacity
            if (contributors == 1) {
                // One job decides this slot's excess: it is linear in that
                // job's choice (exactly one x is 1), no row needed.
                for (auto& [c, x] : terms) m.obj[c] += w * (std::max(0.0, b + x - 1) - std::max(0.0, b - 1));
                constant += w * std::max(0.0, b - 1);
                continue;
            }
            int row = m.add_row(b - 1.0, kInf);
            int e = m.add_col(w, 0, kInf, false);
            m.col[e].push_back({row, 1.0});
            for (auto& [c, x] : terms) m.col[c].push_back({row, -x});
        }
    }
    return constant;
}

struct CbcDeleter {
    void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

// Solves the model; empty when CBC gave no integer solution.
std::vector<double> run_cbc(const Model& m, const std::vector<std::vector<int>>& start, double limit_s,
                            double* bound, bool* optimal) {
    std::vector<CoinBigIndex> begin{0};
    std::vector<int> index;
    std::vector<double> value;
    for (const auto& c : m.col) {
        for (auto& [r, v] : c) {
            index.push_back(r);
            value.push_back(v);
        }
        begin.push_back(static_cast<CoinBigIndex>(index.size()));
    }
    std::unique_ptr<Cbc_Model, CbcDeleter> cbc(Cbc_newModel());
    const int ncol = static_cast<int>(m.col.size()), nrow = static_cast<int>(m.row_lb.size());
    Cbc_loadProblem(cbc.get(), ncol, nrow, begin.data(), index.data(), value.data(), m.col_lb.data(),
                    m.col_ub.data(), m.obj.data(), m.row_lb.data(), m.row_ub.data());
    for (int c = 0; c < ncol; ++c)
        if (m.integer[c]) Cbc_setInteger(cbc.get(), c);
    Cbc_setObjSense(cbc.get(), 1);
    // The simulator prints its tables on stdout: CBC must say nothing.
    Cbc_setLogLevel(cbc.get(), 0);
    Cbc_setParameter(cbc.get(), "log", "0");
    Cbc_setParameter(cbc.get(), "slog", "0");
    // The limit is wall time (CBC counts CPU time by default).
    Cbc_setParameter(cbc.get(), "timeMode", "elapsed");
    const std::string sec = std::to_string(std::max(0.01, limit_s));
    Cbc_setParameter(cbc.get(), "sec", sec.c_str());
    Cbc_setMaximumSeconds(cbc.get(), std::max(0.01, limit_s));
    // The limit is checked between CBC's steps, not inside them: no
    // preprocessing and few root cut passes keep those steps short (the
    // 40-job test overshot a 0.5 s limit threefold with the defaults).
    Cbc_setParameter(cbc.get(), "preprocess", "off");
    Cbc_setParameter(cbc.get(), "passC", "5");
    std::vector<int> idx;
    for (const auto& s : start)
        for (int c : s) idx.push_back(c);
    std::vector<double> ones(idx.size(), 1.0);
    if (!idx.empty()) Cbc_setMIPStartI(cbc.get(), static_cast<int>(idx.size()), idx.data(), ones.data());
    Cbc_solve(cbc.get());
    *optimal = Cbc_isProvenOptimal(cbc.get()) != 0;
    *bound = Cbc_getBestPossibleObjValue(cbc.get());
    const double* sol = Cbc_bestSolution(cbc.get());
    if (sol == nullptr) return {};
    return std::vector<double>(sol, sol + ncol);
}

}  // namespace

std::vector<SlotSolution> solve_milp(const std::vector<SlotProblem>& problems, double time_limit_s,
                                     MilpReport* report) {
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    MilpReport rep;
    Model m;
    std::vector<std::vector<int>> greedy;
    std::vector<std::vector<int>> start_cols;   // the greedy start as x columns
    double constant = 0;
    for (const SlotProblem& p : problems) {
        constant += add_problem(m, p);
        greedy.push_back(greedy_start(p));
        constant += stretch_penalty(p);
        std::vector<int> cols;
        for (size_t i = 0; i < p.jobs.size(); ++i) {
            const SlotJob& j = p.jobs[i];
            if (j.fixed_shift >= 0) continue;
            size_t s = std::find(j.shifts.begin(), j.shifts.end(), greedy.back()[i]) - j.shifts.begin();
            cols.push_back(m.first_x.back()[i] + static_cast<int>(s));
        }
        start_cols.push_back(cols);
    }
    rep.columns = static_cast<int>(m.col.size());
    rep.rows = static_cast<int>(m.row_lb.size());
    for (const auto& c : m.col) rep.nonzeros += static_cast<long>(c.size());

    std::vector<SlotSolution> out(problems.size());
    for (size_t q = 0; q < problems.size(); ++q) out[q].shift = greedy[q];
    bool has_excess_rows = false;   // anything the shifts can change
    for (double c : m.obj) has_excess_rows = has_excess_rows || c > 0;
    double bound_excess = 0;
    bool proven = true;
    if (has_excess_rows) {
        std::vector<double> x;
        try {
            x = run_cbc(m, start_cols, time_limit_s - elapsed(), &bound_excess, &proven);
        } catch (...) {
            // CBC is C++ underneath its C interface; never let it unwind into callers.
            x.clear();
            proven = false;
            bound_excess = 0;
        }
        if (!x.empty()) {
            for (size_t q = 0; q < problems.size(); ++q) {
                const SlotProblem& p = problems[q];
                std::vector<int> shift = greedy[q];
                for (size_t i = 0; i < p.jobs.size(); ++i) {
                    const SlotJob& j = p.jobs[i];
                    if (j.fixed_shift >= 0) continue;
                    int c0 = m.first_x[q][i];
                    size_t best = 0;
                    for (size_t s = 1; s < j.shifts.size(); ++s)
                        if (x[c0 + s] > x[c0 + best]) best = s;
                    shift[i] = j.shifts[best];
                }
                // Keep CBC's answer unless rounding made it worse than the start.
                if (predicted_cost(p, shift) <= predicted_cost(p, greedy[q]) + 1e-12) out[q].shift = shift;
            }
        }
    }
    rep.optimal = proven;
    for (size_t q = 0; q < problems.size(); ++q) {
        out[q].cost = predicted_cost(problems[q], out[q].shift);
        rep.cost += out[q].cost;
    }
    rep.bound = proven ? rep.cost : std::min(rep.cost, constant + std::max(0.0, bound_excess));
    rep.gap = proven || rep.cost <= 1e-12 ? 0 : (rep.cost - rep.bound) / rep.cost;
    for (SlotSolution& s : out) {
        s.optimal = rep.optimal;
        s.gap = rep.gap;
    }
    rep.solve_s = elapsed();
    if (report != nullptr) *report = rep;
    return out;
}

long milp_nonzeros(const std::vector<SlotProblem>& problems) {
    Model m;
    for (const SlotProblem& p : problems) add_problem(m, p);
    long nz = 0;
    for (const auto& c : m.col) nz += static_cast<long>(c.size());
    return nz;
}

SlotSolution solve_milp(const SlotProblem& problem, double time_limit_s, MilpReport* report) {
    return solve_milp(std::vector<SlotProblem>{problem}, time_limit_s, report).front();
}

}  // namespace harmonics
