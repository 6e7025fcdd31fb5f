// Cassini's unified circle: demand arcs, compatibility score, rotation search.
#include "policy/cassini_circle.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "policy/slot_grid.h"

namespace harmonics {

CassiniCircle make_circle(const std::vector<double>& periods_s, double slot_s, int max_rounds, int max_bins) {
    std::int64_t longest = 1;
    std::vector<std::int64_t> slots;
    for (double p : periods_s) {
        std::int64_t s = std::max<std::int64_t>(1, std::llround(p / slot_s));
        slots.push_back(s);
        longest = std::max(longest, s);
    }
    const std::int64_t cap = longest * std::max(1, max_rounds);
    std::int64_t lcm = 1;
    for (std::int64_t s : slots) lcm = lcm_capped(lcm, s, cap);
    // Beyond the cap the circle is a whole number of the longest period: the
    // other jobs no longer close on it, which is the approximation the cap buys.
    if (lcm > cap) lcm = cap;
    CassiniCircle c;
    c.perimeter_s = static_cast<double>(lcm) * slot_s;
    c.bins = static_cast<int>(std::min<std::int64_t>(lcm, std::max(1, max_bins)));
    c.bin_s = c.perimeter_s / c.bins;
    return c;
}

namespace {

// Adds `frac` over the cyclic interval [begin_s, end_s) of the circle, pro
// rata for arcs covered partly.
void add_arc(std::vector<double>& demand, double bin_s, double begin_s, double end_s, double frac) {
    const long n = static_cast<long>(demand.size());
    const double b = begin_s / bin_s, e = end_s / bin_s;
    if (e - b >= n) {
        for (double& x : demand) x += frac;
        return;
    }
    for (long t = static_cast<long>(std::floor(b)); t < e; ++t) {
        double cover = std::min<double>(e, t + 1) - std::max<double>(b, t);
        if (cover <= 1e-12) continue;
        demand[((t % n) + n) % n] += frac * cover;
    }
}

// Sum over arcs of max(0, base + rotated d - 1).
double excess_with(const std::vector<double>& base, const std::vector<double>& d, int rot) {
    const int n = static_cast<int>(base.size());
    double sum = 0;
    for (int b = 0; b < n; ++b) {
        int idx = b - rot;
        if (idx < 0) idx += n;
        sum += std::max(0.0, base[b] + d[idx] - 1.0);
    }
    return sum;
}

void add_rotated(std::vector<double>& load, const std::vector<double>& d, int rot, double sign) {
    const int n = static_cast<int>(load.size());
    for (int b = 0; b < n; ++b) {
        int idx = b - rot;
        if (idx < 0) idx += n;
        load[b] += sign * d[idx];
    }
}

double total_excess(const std::vector<double>& load) {
    double sum = 0;
    for (double x : load) sum += std::max(0.0, x - 1.0);
    return sum;
}

struct Exhaustive {
    const std::vector<std::vector<double>>& demand;
    const std::vector<std::vector<int>>& candidates;
    std::vector<std::vector<double>> level;   // level[i]: load of jobs < i
    std::vector<int> current, best;
    double best_excess = 0;
    bool found = false;

    void run(size_t i) {
        if (i == demand.size()) {
            double ex = total_excess(level[i]);
            if (!found || ex < best_excess - 1e-12) {
                found = true;
                best_excess = ex;
                best = current;
            }
            return;
        }
        for (int rot : candidates[i]) {
            current[i] = rot;
            level[i + 1] = level[i];
            add_rotated(level[i + 1], demand[i], rot, 1.0);
            run(i + 1);
        }
    }
};

int best_candidate(const std::vector<double>& load, const std::vector<double>& d, const std::vector<int>& cands) {
    int best = cands.front();
    double best_ex = excess_with(load, d, best);
    for (size_t k = 1; k < cands.size(); ++k) {
        double ex = excess_with(load, d, cands[k]);
        if (ex < best_ex - 1e-12) {
            best_ex = ex;
            best = cands[k];
        }
    }
    return best;
}

}  // namespace

std::vector<double> circle_demand(const CassiniCircle& c, const JobProfile& job, LinkId link, double capacity_Bps,
                                  double period_s) {
    std::vector<double> d(c.bins, 0.0);
    if (period_s <= 0) return d;
    for (const CommWindow& w : comm_windows(job)) {
        double f = link_fraction(*w.phase, link, capacity_Bps);
        if (f <= 0) continue;
        for (double start = 0; start < c.perimeter_s - 1e-12; start += period_s)
            add_arc(d, c.bin_s, start + w.begin_s, start + w.end_s, f);
    }
    return d;
}

double compatibility_score(const std::vector<std::vector<double>>& demand, const std::vector<int>& rotation) {
    if (demand.empty()) return 1.0;
    std::vector<double> load(demand.front().size(), 0.0);
    for (size_t i = 0; i < demand.size(); ++i) add_rotated(load, demand[i], rotation[i], 1.0);
    return 1.0 - total_excess(load) / static_cast<double>(load.size());
}

CircleRotation best_rotation(const std::vector<std::vector<double>>& demand,
                             const std::vector<std::vector<int>>& candidates, long exhaustive_limit) {
    CircleRotation r;
    const size_t m = demand.size();
    if (m == 0) {
        r.score = 1.0;
        r.exhaustive = true;
        return r;
    }
    const size_t n = demand.front().size();
    long combos = 1;
    for (const auto& c : candidates) {
        combos = c.empty() ? combos : combos * static_cast<long>(c.size());
        if (combos > exhaustive_limit) break;
    }
    if (combos <= exhaustive_limit) {
        Exhaustive ex{demand, candidates, std::vector<std::vector<double>>(m + 1), std::vector<int>(m, 0), {}, 0, false};
        ex.level[0].assign(n, 0.0);
        ex.run(0);
        r.rotation = ex.best;
        r.exhaustive = true;
    } else {
        // Greedy: fixed jobs first, then by decreasing total demand, each at
        // its best rotation against those already placed.
        std::vector<size_t> order(m);
        std::iota(order.begin(), order.end(), 0);
        std::vector<double> mass(m, 0.0);
        for (size_t i = 0; i < m; ++i) mass[i] = std::accumulate(demand[i].begin(), demand[i].end(), 0.0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            bool fa = candidates[a].size() == 1, fb = candidates[b].size() == 1;
            if (fa != fb) return fa;
            return mass[a] > mass[b];
        });
        std::vector<double> load(n, 0.0);
        r.rotation.assign(m, 0);
        for (size_t i : order) {
            r.rotation[i] = best_candidate(load, demand[i], candidates[i]);
            add_rotated(load, demand[i], r.rotation[i], 1.0);
        }
        // Coordinate descent: move one job at a time to its best rotation
        // against all the others until nothing moves (bounded passes).
        for (int pass = 0; pass < 4; ++pass) {
            bool moved = false;
            for (size_t i : order) {
                if (candidates[i].size() <= 1) continue;
                add_rotated(load, demand[i], r.rotation[i], -1.0);
                int before = r.rotation[i];
                double ex_before = excess_with(load, demand[i], before);
                int rot = best_candidate(load, demand[i], candidates[i]);
                if (rot != before && excess_with(load, demand[i], rot) < ex_before - 1e-12) {
                    r.rotation[i] = rot;
                    moved = true;
                }
                add_rotated(load, demand[i], r.rotation[i], 1.0);
            }
            if (!moved) break;
        }
    }
    r.score = compatibility_score(demand, r.rotation);
    return r;
}

}  // namespace harmonics
