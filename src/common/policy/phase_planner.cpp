#include "policy/phase_planner.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "policy/free_running.h"
#include "policy/gate_waits.h"
#include "policy/slot_grid.h"

namespace harmonics::phase {

Planner::Planner(const Topology& topo, const std::vector<JobProfile>& jobs, const PhaseGroupOptions& o)
    : jobs_(jobs), o_(o), rng_(o.seed * 0x9E3779B97F4A7C15ull + 1) {
    const auto leaf_of = leaf_of_links(topo);
    rhythm_.reserve(jobs.size());
    for (const JobProfile& j : jobs) rhythm_.push_back(rhythm_of(topo, j, leaf_of));
    for (size_t j = 0; j < rhythm_.size(); ++j)
        for (const auto& [l, peak] : rhythm_[j].links) {
            peak_sum_[l] += peak;
            on_link_[l].emplace_back(j, peak);
        }
}

bool Planner::contended(size_t i) const {
    for (const auto& [l, peak] : rhythm_[i].links) {
        (void)peak;
        if (peak_sum_.at(l) > 1 + kEps) return true;
    }
    return false;
}

bool Planner::fits(size_t i, double P, int K, bool kept, bool joining) const {
    const double tol = kept ? o_.keep_tolerance : 0;
    const double least = joining ? rhythm_[i].T * (1 + o_.guard / 2) : target(i) * (1 - tol);
    // A family in force may have taken the longer period of an overloaded one.
    const double stretch = kept ? std::max(o_.max_stretch, o_.overload_stretch) : o_.max_stretch;
    return least <= P + kEps && P <= target(i) * (1 + stretch) * (1 + tol) + kEps &&
           rhythm_[i].window * (1 - tol) + o_.guard * P <= P / K + kEps;
}

double Planner::free_slowdown(size_t i) const {
    double worst = 0;
    for (const auto& [l, peak] : rhythm_[i].links) {
        (void)peak;
        if (peak_sum_.at(l) <= 1 + kEps) continue;   // room for all at their peaks: nothing shared
        const std::vector<std::pair<size_t, double>>& on = on_link_.at(l);
        auto [it, fresh] = free_on_link_.try_emplace(l);
        if (fresh) {   // once per link, for every job on it
            std::vector<FreeRunner> runners;
            for (const auto& [j, f] : on) {
                const Rhythm& r = rhythm_[j];
                runners.push_back({f * r.window, std::max(0.0, r.T - r.window), f});   // work, time off, cap
            }
            it->second = free_running_slowdowns(runners, 1.0);
        }
        for (size_t k = 0; k < on.size(); ++k)
            if (on[k].first == i) worst = std::max(worst, it->second[k]);
    }
    return worst;
}

void Planner::set_phases(const std::map<JobId, JobDecision>& previous, double now_s) {
    now_s_ = now_s;
    next_burst_.assign(jobs_.size(), -1);
    burst_period_.assign(jobs_.size(), 0);
    for (size_t j = 0; j < jobs_.size(); ++j) {
        auto p = previous.find(jobs_[j].id);
        const JobDecision* d = p != previous.end() ? &p->second : nullptr;
        next_burst_[j] = next_release_s(jobs_[j], d, now_s);
        burst_period_[j] = d && d->gated && d->period_s > 0 ? d->period_s
                           : jobs_[j].measured_period_s > 0 ? jobs_[j].measured_period_s
                                                            : rhythm_[j].T;
    }
}

double Planner::standing_slowdown(size_t i, double horizon_s) const {
    if (next_burst_.size() != jobs_.size() || next_burst_[i] < 0) return -1;
    const double end = now_s_ + horizon_s;
    // A job of a far shorter period than the member's (more than kMostBursts
    // bursts in a horizon of 20 of the member's periods) sweeps through its
    // bursts, as at random phases: the queueing estimate judges that link.
    // Counting such jobs too cost the first decision of a mixed 8,192-node
    // cluster 505-520 ms against 59-62 (64: 69 ms), and the two-model pairs
    // at random phases more (doc/scale.md, "Stop 47").
    constexpr double kMostBursts = 64;
    auto too_many = [&](size_t j) { return (end - next_burst_[j]) / burst_period_[j] > kMostBursts; };
    if (burst_period_[i] <= 0 || too_many(i)) return -1;
    double worst = 0;
    for (const auto& [l, mine] : rhythm_[i].links) {
        if (peak_sum_.at(l) <= 1 + kEps) continue;
        // Every burst on the link within the horizon: (start, +peak), (end, -peak).
        std::vector<std::pair<double, double>> ev;
        for (const auto& [j, f] : on_link_.at(l)) {
            if (j == i) continue;
            if (next_burst_[j] < 0) return -1;
            const double p = burst_period_[j], w = rhythm_[j].window;
            if (p <= 0 || w <= 0) continue;
            if (too_many(j)) return -1;
            for (double t = next_burst_[j] - p; t < end; t += p) {   // the one running now too
                ev.emplace_back(t, f);
                ev.emplace_back(t + w, -f);
            }
        }
        std::sort(ev.begin(), ev.end());
        // Job i's bursts: the share of each lost where its link is over capacity.
        // One sweep: job i's bursts come in order and never overlap (w < p).
        double lost = 0, other = 0;
        int bursts = 0;
        size_t k = 0;
        const double p = burst_period_[i], w = rhythm_[i].window;
        for (double s = next_burst_[i]; s < end; s += p, ++bursts) {
            for (; k < ev.size() && ev[k].first <= s; ++k) other += ev[k].second;
            for (double t = s; t < s + w;) {
                const double next = k < ev.size() ? std::min(ev[k].first, s + w) : s + w;
                const double load = mine + other;
                if (load > 1 + kEps) lost += (next - t) * (1 - 1 / load);
                t = next;
                if (k < ev.size() && ev[k].first < s + w) other += ev[k++].second;
            }
        }
        if (bursts > 0) worst = std::max(worst, lost / (bursts * rhythm_[i].T));
    }
    return worst;
}

int Planner::groups_for(const std::vector<size_t>& members, double P) const {
    double w = 0;
    for (size_t i : members) w = std::max(w, rhythm_[i].window);
    return w > 0 ? static_cast<int>(std::floor(P / (w + o_.guard * P) + kEps)) : 0;
}

double Planner::shared_load(size_t i, const std::vector<std::pair<size_t, int>>& seats) const {
    std::set<LinkId> mine;
    for (const auto& [l, peak] : rhythm_[i].links) mine.insert(l);
    double s = 0;
    for (const auto& [m, g] : seats)
        for (const auto& [l, peak] : rhythm_[m].links)
            if (mine.count(l)) s += peak;
    return s;
}

std::map<LinkId, double> Planner::background(const std::vector<size_t>& members,
                                             const std::vector<size_t>& skip) const {
    std::vector<bool> in(jobs_.size(), false);
    for (size_t i : members) in[i] = true;
    for (size_t i : skip) in[i] = true;
    std::map<LinkId, double> bg;
    for (size_t i : members)
        for (const auto& [l, peak] : rhythm_[i].links) {
            (void)peak;
            bg[l] = 0;
        }
    for (auto& [l, sum] : bg)
        for (const auto& [j, peak] : on_link_.at(l))
            if (!in[j]) sum += peak;
    return bg;
}

std::vector<std::pair<int, double>> Planner::uses(size_t i, const WindowLoads& w) const {
    std::vector<std::pair<int, double>> u;
    for (const auto& [l, peak] : rhythm_[i].links) u.emplace_back(w.index(l), peak);
    return u;
}

int Planner::best_window(const std::vector<std::pair<int, double>>& u, const WindowLoads& w, double* added) const {
    int best = 0;
    double bo = 1e300, bl = 1e300;
    for (int g = 0; g < w.groups(); ++g) {
        const double a = w.added(u, g), l = w.total_load(u, g);
        if (a < bo - kEps || (a < bo + kEps && l < bl - kEps)) {
            best = g;
            bo = a;
            bl = l;
        }
    }
    if (added) *added = bo;
    return best;
}

std::vector<int> Planner::greedy(const std::vector<size_t>& members, WindowLoads& w) const {
    const size_t n = members.size();
    std::vector<std::vector<std::pair<int, double>>> u(n);
    for (size_t m = 0; m < n; ++m) u[m] = uses(members[m], w);
    std::vector<size_t> order(n);
    for (size_t m = 0; m < n; ++m) order[m] = m;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return u[a].size() > u[b].size(); });
    std::vector<int> win(n, 0);
    for (size_t m : order) {
        win[m] = best_window(u[m], w, nullptr);
        w.put(u[m], win[m], 1);
    }
    return win;
}

void Planner::anneal(const std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::int64_t budget,
                     std::int64_t* moves) {
    const size_t n = members.size();
    const int K = w.groups();
    std::vector<std::vector<std::pair<int, double>>> u(n);
    for (size_t m = 0; m < n; ++m) u[m] = uses(members[m], w);
    // Per member its (link slot, peak) run; loads with the background added.
    std::vector<int> first(n + 1, 0), slot;
    std::vector<double> peak;
    double typical = 0;
    for (size_t m = 0; m < n; ++m) {
        for (const auto& [x, f] : u[m]) {
            slot.push_back(x * K);
            peak.push_back(f);
            typical = std::max(typical, f);
        }
        first[m + 1] = static_cast<int>(slot.size());
    }
    const std::vector<int> start = win;
    std::vector<double> load = w.loads_with_background();
    double cur = w.total(), best = cur;
    const double floor = w.unavoidable();   // no assignment does better: stop there
    std::vector<int> best_win = win;
    const double t_hot = 2 * typical, t_cold = 0.2 * typical;
    const double cool = budget > 0 ? std::pow(t_cold / t_hot, 1.0 / double(budget)) : 1;
    double temp = t_hot;
    std::int64_t done = 0;
    for (; done < budget && best > floor + kEps && K > 1; ++done, temp *= cool) {
        const size_t m = rng_() % n;
        const int from = win[m];
        int to = static_cast<int>(rng_() % (K - 1));
        if (to >= from) ++to;
        double delta = 0;
        for (int e = first[m]; e < first[m + 1]; ++e) {
            const double a = load[slot[e] + from], b = load[slot[e] + to], f = peak[e];
            delta += overload(a - f) + overload(b + f) - overload(a) - overload(b);
        }
        if (delta > 0 && double(rng_() >> 11) * 0x1.0p-53 >= std::exp(-delta / temp)) continue;
        for (int e = first[m]; e < first[m + 1]; ++e) {
            load[slot[e] + from] -= peak[e];
            load[slot[e] + to] += peak[e];
        }
        win[m] = to;
        cur += delta;
        if (cur < best - kEps) {
            best = cur;
            best_win = win;
        }
    }
    *moves += done;
    for (size_t m = 0; m < n; ++m) {
        w.put(u[m], start[m], -1);
        w.put(u[m], best_win[m], 1);
    }
    win = best_win;
}

std::vector<size_t> Planner::free_riders(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w,
                                         size_t in_force) const {
    std::vector<size_t> order(members.size());
    for (size_t m = 0; m < order.size(); ++m) order[m] = m;
    auto rank = [&](size_t m) { return std::make_tuple(m < in_force, target(members[m]), jobs_[members[m]].id); };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
    std::vector<bool> out(members.size(), false);
    for (size_t m : order) {
        const auto u = uses(members[m], w);
        bool room = true;
        for (int g = 0; g < w.groups() && room; ++g) room = g == win[m] || w.added(u, g) <= kEps;
        if (!room) continue;
        w.set_free(u, win[m]);
        out[m] = true;
    }
    std::vector<size_t> freed, kept_members;
    std::vector<int> kept_win;
    for (size_t m = 0; m < members.size(); ++m) {
        if (out[m]) {
            freed.push_back(members[m]);
        } else {
            kept_members.push_back(members[m]);
            kept_win.push_back(win[m]);
        }
    }
    members = std::move(kept_members);
    win = std::move(kept_win);
    return freed;
}

WindowLoads Planner::placed_loads(const std::vector<size_t>& members, const std::vector<int>& win, int K,
                                  const std::vector<size_t>& also, const std::vector<size_t>& skip) const {
    std::vector<size_t> with = members;
    with.insert(with.end(), also.begin(), also.end());
    WindowLoads w(K, background(with, skip));
    for (size_t m = 0; m < members.size(); ++m) w.put(uses(members[m], w), win[m], 1);
    return w;
}

void Planner::join(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::vector<size_t>& newcomers,
                   double P, int K) const {
    std::vector<size_t> cand;
    for (size_t i : newcomers)
        if (fits(i, P, K, /*kept=*/false, /*joining=*/true)) cand.push_back(i);
    while (!cand.empty()) {
        WindowLoads wc = placed_loads(members, win, K, cand);   // the candidates' links may be new to the family
        std::vector<int> placed;
        size_t failed = cand.size();
        for (size_t c = 0; c < cand.size(); ++c) {
            double added = 0;
            const auto u = uses(cand[c], wc);
            const int g = best_window(u, wc, &added);
            if (added > kEps) {
                failed = c;
                break;
            }
            wc.put(u, g, 1);
            placed.push_back(g);
        }
        if (failed < cand.size()) {
            cand.erase(cand.begin() + static_cast<std::ptrdiff_t>(failed));
            continue;
        }
        // All placed: only now may the loads leave out the candidates' peaks.
        for (size_t c = 0; c < cand.size(); ++c) {
            members.push_back(cand[c]);
            win.push_back(placed[c]);
            newcomers.erase(std::find(newcomers.begin(), newcomers.end(), cand[c]));
        }
        w = std::move(wc);
        return;
    }
}

bool Planner::room_everywhere(size_t i, const WindowLoads& w) const {
    const auto u = uses(i, w);
    for (int g = 0; g < w.groups(); ++g)
        if (w.added(u, g) > kEps) return false;
    return true;
}

int Planner::dirty(const std::vector<size_t>& members, const std::vector<int>& win, WindowLoads& w) const {
    int d = 0;
    for (size_t m = 0; m < members.size(); ++m) d += w.overloads(uses(members[m], w), win[m]);
    return d;
}

JobDecision Planner::decision(const PhaseFamily& f, int g) const {
    JobDecision d;
    d.gated = true;
    d.period_s = f.period_s;
    d.origin_s = f.origin_s;
    d.shift_s = std::round(g * f.period_s / f.groups / o_.slot_s) * o_.slot_s;
    // late_s stays unknown (the release rule's default share of the
    // period): a member late past the gap its window leaves still goes
    // at once rather than losing a period (measured: doc/policies.md).
    d.group = g;
    d.groups = f.groups;
    return d;
}

}  // namespace harmonics::phase
