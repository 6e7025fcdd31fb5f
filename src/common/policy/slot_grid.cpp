// The slot-grid problem: building it from job profiles, its cost, and
// harmonic periods. See slot_grid.h for the cost model.
#include "policy/slot_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace harmonics {

std::int64_t gcd64(std::int64_t a, std::int64_t b) {
    while (b != 0) {
        std::int64_t t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

std::int64_t lcm_capped(std::int64_t a, std::int64_t b, std::int64_t cap) {
    if (a <= 0) return b;
    if (b <= 0) return a;
    std::int64_t g = gcd64(a, b);
    std::int64_t q = a / g;
    if (q > (cap + 1) / b + 1) return cap + 1;
    std::int64_t l = q * b;
    return l > cap ? cap + 1 : l;
}

bool finalize_hyperperiod(SlotProblem& p, std::int64_t max_slots) {
    std::int64_t h = 1;
    for (const SlotJob& j : p.jobs) {
        h = lcm_capped(h, j.period_slots, max_slots);
        if (h > max_slots) return false;
    }
    p.hyperperiod_slots = static_cast<int>(h);
    return true;
}

std::vector<CommWindow> comm_windows(const JobProfile& job) {
    std::vector<CommWindow> w;
    double prev_end = 0;
    for (const CommPhase& ph : job.phases) {
        double begin = std::max(ph.start_offset_s, prev_end);
        w.push_back({begin, begin + ph.alone_s, &ph});
        prev_end = begin + ph.alone_s;
    }
    if (!w.empty()) {
        double first = w.front().begin_s;
        for (CommWindow& c : w) {
            c.begin_s -= first;
            c.end_s -= first;
        }
    }
    return w;
}

double iteration_period_s(const JobProfile& job) {
    // Isolated first: a measured period includes the slowdown of collisions,
    // and planning on it would lock that slowdown into the schedule.
    if (job.isolated_period_s > 0) return job.isolated_period_s;
    if (job.measured_period_s > 0) return job.measured_period_s;
    double end = job.compute_s;
    double prev_end = 0;
    for (const CommPhase& ph : job.phases) {
        prev_end = std::max(ph.start_offset_s, prev_end) + ph.alone_s;
        end = std::max(end, prev_end);
    }
    return end;
}

double use_fraction(const CommPhase& ph, const LinkUse& u, double capacity_Bps) {
    if (ph.alone_s <= 0 || capacity_Bps <= 0) return 0;
    return u.multiplicity * ph.bytes_per_edge / ph.alone_s / capacity_Bps;
}

double link_fraction(const CommPhase& ph, LinkId id, double capacity_Bps) {
    if (ph.alone_s <= 0 || capacity_Bps <= 0) return 0;
    double mult = 0;
    for (const LinkUse& u : ph.links)
        if (u.link == id) mult += u.multiplicity;
    return mult * (ph.bytes_per_edge / ph.alone_s) / capacity_Bps;
}

namespace {

// Adds `frac` over [begin_s, end_s) to a cyclic pattern of slots, pro rata
// for slots covered partly.
void add_window(std::vector<double>& pattern, double slot_s, double begin_s, double end_s, double frac) {
    const int n = static_cast<int>(pattern.size());
    double b = begin_s / slot_s, e = end_s / slot_s;
    if (e - b >= n) {
        for (double& x : pattern) x += frac;
        return;
    }
    for (long t = static_cast<long>(std::floor(b)); t < e; ++t) {
        double cover = std::min<double>(e, t + 1) - std::max<double>(b, t);
        if (cover <= 1e-9) continue;  // float noise at a window edge
        long idx = ((t % n) + n) % n;
        pattern[idx] += frac * cover;
    }
}

}  // namespace

int add_slot_job(SlotProblem& p, const JobProfile& job, int period_slots, int shift_step, int max_shifts) {
    SlotJob sj;
    sj.id = job.id;
    sj.isolated_period_s = iteration_period_s(job);
    sj.period_slots = std::max(1, period_slots);
    const std::vector<CommWindow> windows = comm_windows(job);
    for (int k = 0; k < static_cast<int>(p.links.size()); ++k) {
        SlotDemand d;
        d.link = k;
        d.pattern.assign(sj.period_slots, 0.0);
        bool any = false;
        for (const CommWindow& w : windows) {
            double f = link_fraction(*w.phase, p.links[k].id, p.links[k].capacity_Bps);
            if (f <= 0) continue;
            add_window(d.pattern, p.slot_s, w.begin_s, w.end_s, f);
            any = true;
        }
        if (any) sj.demand.push_back(std::move(d));
    }
    if (shift_step <= 0) {
        int m = std::max(1, max_shifts);
        shift_step = (sj.period_slots + m - 1) / m;
    }
    for (int s = 0; s < sj.period_slots; s += shift_step) sj.shifts.push_back(s);
    p.jobs.push_back(std::move(sj));
    return static_cast<int>(p.jobs.size()) - 1;
}

double average_load(const SlotProblem& p, const JobProfile& job, int k) {
    double T = iteration_period_s(job);
    if (T <= 0) return 0;
    double sum = 0;
    for (const CommWindow& w : comm_windows(job))
        sum += link_fraction(*w.phase, p.links[k].id, p.links[k].capacity_Bps) * (w.end_s - w.begin_s);
    return sum / T;
}

double peak_load(const SlotProblem& p, const JobProfile& job, int k) {
    double peak = 0;
    for (const CommPhase& ph : job.phases) peak = std::max(peak, link_fraction(ph, p.links[k].id, p.links[k].capacity_Bps));
    return peak;
}

double predicted_cost(const SlotProblem& p, const std::vector<int>& shift) {
    const int H = p.hyperperiod_slots;
    double cost = 0;
    for (const SlotJob& j : p.jobs)
        if (j.isolated_period_s > 0) cost += j.period_slots * p.slot_s / j.isolated_period_s - 1;
    if (H <= 0) return cost;
    std::vector<std::vector<double>> load(p.links.size());
    for (size_t k = 0; k < p.links.size(); ++k) load[k].assign(H, p.links[k].background);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const SlotJob& j = p.jobs[i];
        const int P = j.period_slots;
        const int s = ((shift[i] % P) + P) % P;
        // Only the slots the job communicates in: O(its bursts · H / P), not O(H).
        for (const SlotDemand& d : j.demand) {
            std::vector<double>& L = load[d.link];
            for (int t0 = 0; t0 < P; ++t0) {
                if (d.pattern[t0] == 0) continue;
                for (int t = (t0 + s) % P; t < H; t += P) L[t] += d.pattern[t0];
            }
        }
    }
    for (size_t k = 0; k < p.links.size(); ++k) {
        double excess = 0;
        for (double x : load[k]) excess += slot_excess(p.links[k], x);
        cost += p.links[k].weight * excess / H;
    }
    return cost;
}

double slot_excess(const SlotLink& link, double load) {
    if (link.background_mix.empty()) return std::max(0.0, load - 1.0);
    // The mix is sorted by y: walk down from the largest and stop at the
    // first value that no longer overloads the slot.
    double e = 0;
    for (auto it = link.background_mix.rbegin(); it != link.background_mix.rend(); ++it) {
        double over = load + it->first - 1.0;
        if (over <= 0) break;
        e += it->second * over;
    }
    return e;
}

void add_free_job(SlotLink& link, double f, double duty, size_t max_points) {
    if (f <= 0 || duty <= 0) return;
    duty = std::min(1.0, duty);
    std::vector<std::pair<double, double>> mix = link.background_mix;
    if (mix.empty()) mix = {{0.0, 1.0}};
    std::vector<std::pair<double, double>> next;
    for (const auto& [y, p] : mix) {
        next.push_back({y, p * (1 - duty)});
        next.push_back({y + f, p * duty});
    }
    std::sort(next.begin(), next.end());
    // Merge equal values, then pairs of neighbours, keeping the mean load.
    std::vector<std::pair<double, double>> out;
    for (const auto& v : next) {
        if (v.second <= 0) continue;
        if (!out.empty() && std::fabs(out.back().first - v.first) < 1e-9) out.back().second += v.second;
        else out.push_back(v);
    }
    // Merge the neighbours whose merge loses the least variance (Ward's
    // criterion): rare tail values go first, the likely ones stay exact.
    auto loss = [&](size_t i) {
        double pa = out[i].second, pb = out[i + 1].second, d = out[i + 1].first - out[i].first;
        return pa * pb / (pa + pb) * d * d;
    };
    while (out.size() > max_points) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < out.size(); ++i)
            if (loss(i) < loss(best)) best = i;
        double p = out[best].second + out[best + 1].second;
        double y = (out[best].first * out[best].second + out[best + 1].first * out[best + 1].second) / p;
        out[best] = {y, p};
        out.erase(out.begin() + static_cast<long>(best) + 1);
    }
    link.background_mix = std::move(out);
}

namespace {

struct PeriodRange {
    std::int64_t lo, hi;
};

// Tries one base b: every job's period is the least multiple of b in its
// range; jobs that do not fit (or would push the hyperperiod past the cap)
// run free, fixed ones first so they are never dropped for a free one.
struct BaseTry {
    std::vector<int> period;
    int placed = 0;
    double stretch = 0;
    std::int64_t hyper = 1;
};

BaseTry try_base(const std::vector<PeriodRange>& r, const std::vector<int>& fixed, std::int64_t b, std::int64_t cap) {
    BaseTry bt;
    bt.period.assign(r.size(), 0);
    for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < r.size(); ++i) {
            bool is_fixed = i < fixed.size() && fixed[i] > 0;
            if (is_fixed != (pass == 0)) continue;
            std::int64_t m = (r[i].lo + b - 1) / b;
            std::int64_t per = m * b;
            if (per > r[i].hi) continue;
            std::int64_t h = lcm_capped(bt.hyper, per, cap);
            if (h > cap) continue;
            bt.hyper = h;
            bt.period[i] = static_cast<int>(per);
            bt.placed++;
            bt.stretch += static_cast<double>(per - r[i].lo) / r[i].lo;
        }
    }
    return bt;
}

}  // namespace

std::vector<int> harmonic_periods(const std::vector<double>& T_s, const std::vector<int>& fixed, double slot_s,
                                  double max_stretch, std::int64_t max_hyper_slots, std::int64_t max_tries) {

    const size_t n = T_s.size();
    std::vector<PeriodRange> r(n);
    std::int64_t top = 1;
    for (size_t i = 0; i < n; ++i) {
        if (i < fixed.size() && fixed[i] > 0) {
            r[i] = {fixed[i], fixed[i]};
        } else {
            double lo = std::max(1.0, std::ceil(T_s[i] / slot_s - 1e-9));
            double hi = std::max(lo, std::floor(T_s[i] * (1 + max_stretch) / slot_s + 1e-9));
            r[i] = {static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi)};
        }
        top = std::max(top, r[i].hi);
    }
    // Base 1 is "no stretch at all"; larger bases trade stretch for a shorter
    // hyperperiod. Keep the try that gates most jobs, then least stretch.
    BaseTry best = try_base(r, fixed, 1, max_hyper_slots);
    if (best.placed == static_cast<int>(n)) return best.period;
    for (std::int64_t b = top; b >= 2; --b) {
        // Largest bases (shortest hyperperiods) first; past the work cap, keep
        // the best so far (a count, not a clock: the same jobs get the same periods).
        if (max_tries > 0 && static_cast<std::int64_t>(top - b + 1) * static_cast<std::int64_t>(n) > max_tries) break;
        BaseTry bt = try_base(r, fixed, b, max_hyper_slots);
        if (bt.placed > best.placed || (bt.placed == best.placed && bt.stretch < best.stretch - 1e-12))
            best = std::move(bt);
    }
    return best.period;
}

}  // namespace harmonics
