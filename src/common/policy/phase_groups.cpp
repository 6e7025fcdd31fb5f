#include "policy/phase_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>

#include "policy/slot_grid.h"

namespace harmonics {
namespace {

constexpr double kEps = 1e-9;

// What the plan needs of a job: its rhythm and, per leaf link it crosses,
// the capacity fraction it takes while communicating.
struct Rhythm {
    double T = 0;        // isolated iteration time
    double window = 0;   // first collective's start to the last one's end
    std::vector<std::pair<LinkId, double>> links;   // link, peak fraction
};

Rhythm rhythm_of(const Topology& topo, const JobProfile& job, const std::unordered_map<LinkId, SwitchId>& leaf_of) {
    Rhythm r;
    r.T = iteration_period_s(job);
    std::map<LinkId, double> peak;
    for (const CommWindow& w : comm_windows(job)) {
        const CommPhase& ph = *w.phase;
        r.window = std::max(r.window, w.end_s);
        if (ph.alone_s <= 0) continue;
        for (const LinkUse& u : ph.links) {
            if (!leaf_of.count(u.link)) continue;
            const double f = use_fraction(ph, u, topo.link(u.link).capacity_Bps);
            peak[u.link] = std::max(peak[u.link], f);
        }
    }
    r.links.assign(peak.begin(), peak.end());
    return r;
}

double overload(double load) { return std::max(0.0, load - 1 - kEps); }

// One family's window assignment: loads per (link, window), on top of the
// peak load of the jobs outside the family (Planner::background).
class WindowLoads {
public:
    WindowLoads(int groups, const std::map<LinkId, double>& background) : k_(groups) {
        for (const auto& [l, bg] : background) {
            index_[l] = static_cast<int>(bg_.size());
            bg_.push_back(bg);
        }
        load_.assign(bg_.size() * k_, 0.0);
    }
    int groups() const { return k_; }
    int index(LinkId l) const { return index_.at(l); }
    // Added overload if a job with these (link index, peak) pairs joined window g.
    double added(const std::vector<std::pair<int, double>>& uses, int g) const {
        double d = 0;
        for (const auto& [x, f] : uses) {
            const double before = load_[x * k_ + g] + bg_[x];
            d += overload(before + f) - overload(before);
        }
        return d;
    }
    double total_load(const std::vector<std::pair<int, double>>& uses, int g) const {
        double s = 0;
        for (const auto& [x, f] : uses) s += load_[x * k_ + g];
        return s;
    }
    void put(const std::vector<std::pair<int, double>>& uses, int g, double sign) {
        for (const auto& [x, f] : uses) load_[x * k_ + g] += sign * f;
    }
    // A job outside every window: it loads all of them.
    void add_background(const std::vector<std::pair<int, double>>& uses) {
        for (const auto& [x, f] : uses) bg_[x] += f;
    }
    // A job leaving its window to run free.
    void set_free(const std::vector<std::pair<int, double>>& uses, int g) {
        put(uses, g, -1);
        add_background(uses);
    }
    bool overloads(const std::vector<std::pair<int, double>>& uses, int g) const {
        for (const auto& [x, f] : uses)
            if (overload(load_[x * k_ + g] + bg_[x]) > 0) return true;
        return false;
    }
    // The overload no assignment avoids: a link's windows carry its members'
    // demand and K times its background whatever the windows, and at most
    // K of that without overload.
    double unavoidable() const {
        double s = 0;
        for (size_t x = 0; x < bg_.size(); ++x) {
            double sum = k_ * bg_[x];
            for (int g = 0; g < k_; ++g) sum += load_[x * k_ + g];
            s += std::max(0.0, sum - k_ - kEps);
        }
        return s;
    }
    std::vector<double> loads_with_background() const {
        std::vector<double> v = load_;
        for (size_t x = 0; x < bg_.size(); ++x)
            for (int g = 0; g < k_; ++g) v[x * k_ + g] += bg_[x];
        return v;
    }
    double total() const {
        double s = 0;
        for (size_t x = 0; x < bg_.size(); ++x)
            for (int g = 0; g < k_; ++g) s += overload(load_[x * k_ + g] + bg_[x]);
        return s;
    }

private:
    int k_;
    std::unordered_map<LinkId, int> index_;
    std::vector<double> bg_;
    std::vector<double> load_;
};

class Planner {
public:
    Planner(const Topology& topo, const std::vector<JobProfile>& jobs, const PhaseGroupOptions& o)
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

    // A job whose links cannot be overloaded whatever the phases.
    bool contended(size_t i) const {
        for (const auto& [l, peak] : rhythm_[i].links) {
            (void)peak;
            if (peak_sum_.at(l) > 1 + kEps) return true;
        }
        return false;
    }
    double target(size_t i) const { return rhythm_[i].T * (1 + o_.guard); }
    // Whether job i may be a member of a family at period P with K windows:
    // P at least its guarded T and within the stretch allowed, its burst and
    // a guard within one window. `kept`: the family is in force, and the
    // measurements may have moved by the keep tolerance. `joining`: job i
    // would join a family in force as a newcomer, whose period it need only
    // keep with half the guard to spare: the same model measured on another
    // leaf's rank comes out a little slower (daemons.groups: 200.4 against
    // 200.0 ms), and refused, it stayed out of its family for seconds.
    bool fits(size_t i, double P, int K, bool kept = false, bool joining = false) const {
        const double tol = kept ? o_.keep_tolerance : 0;
        const double least = joining ? rhythm_[i].T * (1 + o_.guard / 2) : target(i) * (1 - tol);
        // A family in force may have taken the longer period of an overloaded one.
        const double stretch = kept ? std::max(o_.max_stretch, o_.overload_stretch) : o_.max_stretch;
        return least <= P + kEps && P <= target(i) * (1 + stretch) * (1 + tol) + kEps &&
               rhythm_[i].window * (1 - tol) + o_.guard * P <= P / K + kEps;
    }
    // The windows a family's period holds: each the longest member burst plus a guard.
    int groups_for(const std::vector<size_t>& members, double P) const {
        double w = 0;
        for (size_t i : members) w = std::max(w, rhythm_[i].window);
        return w > 0 ? static_cast<int>(std::floor(P / (w + o_.guard * P) + kEps)) : 0;
    }
    // The peak load a family's members (job, window) put on the links job i crosses.
    double shared_load(size_t i, const std::vector<std::pair<size_t, int>>& seats) const {
        std::set<LinkId> mine;
        for (const auto& [l, peak] : rhythm_[i].links) mine.insert(l);
        double s = 0;
        for (const auto& [m, g] : seats)
            for (const auto& [l, peak] : rhythm_[m].links)
                if (mine.count(l)) s += peak;
        return s;
    }

    // On each link the members cross, the peak load of every job outside
    // `members`: those run at phases the family does not choose (free, or
    // gated by an owner on another period), so a window is clean only if it
    // fits beside all of them at once. (Their average instead let families
    // form in mixes of thirteen models, whose members then collided with
    // free jobs and missed slots: 1,024 nodes, 0.00 -> -0.09 % against fair.)
    // Only the jobs on the members' links are visited, in job order.
    // `skip`: jobs left out of the background as well (none by default).
    std::map<LinkId, double> background(const std::vector<size_t>& members, const std::vector<size_t>& skip = {}) const {
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

    std::vector<std::pair<int, double>> uses(size_t i, const WindowLoads& w) const {
        std::vector<std::pair<int, double>> u;
        for (const auto& [l, peak] : rhythm_[i].links) u.emplace_back(w.index(l), peak);
        return u;
    }

    // The window adding the least overload (then the least loaded one).
    int best_window(const std::vector<std::pair<int, double>>& u, const WindowLoads& w, double* added) const {
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

    // Windows for a new family: greedy placement, most links first.
    std::vector<int> greedy(const std::vector<size_t>& members, WindowLoads& w) const {
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

    // Simulated annealing on the summed overload, from `win` (whose loads
    // `w` holds), for `budget` moves or until no assignment could overload
    // less; leaves the best assignment in `win` and `w`. The hot loop works
    // on flat arrays: a move touches only the moved job's links in its old
    // and new window.
    void anneal(const std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::int64_t budget,
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

    // Members whose burst fits beside every other window on all their links
    // need no window: they run free at their own T instead of the family's
    // longer P. Each one freed then loads every window, which leaves the next
    // less room, so the order matters: jobs not gated in the family now
    // first (the first `in_force` members are; a free rider stays free
    // rather than trade places with one of them, epoch after epoch), then
    // the most stretched (the shortest targets), then by id.
    std::vector<size_t> free_riders(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w,
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

    // A family's loads with `members` in their windows `win`, on their links
    // and those of `also` (placed later, or not at all), against the peak of
    // every other job but `skip`.
    WindowLoads placed_loads(const std::vector<size_t>& members, const std::vector<int>& win, int K,
                             const std::vector<size_t>& also = {}, const std::vector<size_t>& skip = {}) const {
        std::vector<size_t> with = members;
        with.insert(with.end(), also.begin(), also.end());
        WindowLoads w(K, background(with, skip));
        for (size_t m = 0; m < members.size(); ++m) w.put(uses(members[m], w), win[m], 1);
        return w;
    }

    // Newcomers that fit a family in force (`members` in `win`, loads in
    // `w`) join it where they overload no link; those that join leave
    // `newcomers`. They are placed together: each beside the members and
    // those placed before it, against every other job at its peak but the
    // other candidates (newcomers that came together, each at its peak in
    // the others' background, all found no room: daemons.free_rider). One
    // that finds no window drops out, and the rest are placed again with it
    // at its peak, until all that are left fit.
    void join(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::vector<size_t>& newcomers,
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

    // Whether job i (on `w`'s links) fits beside every window of `w`.
    bool room_everywhere(size_t i, const WindowLoads& w) const {
        const auto u = uses(i, w);
        for (int g = 0; g < w.groups(); ++g)
            if (w.added(u, g) > kEps) return false;
        return true;
    }

    int dirty(const std::vector<size_t>& members, const std::vector<int>& win, WindowLoads& w) const {
        int d = 0;
        for (size_t m = 0; m < members.size(); ++m) d += w.overloads(uses(members[m], w), win[m]);
        return d;
    }

    JobDecision decision(const PhaseFamily& f, int g) const {
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

private:
    const std::vector<JobProfile>& jobs_;
    const PhaseGroupOptions& o_;
    std::vector<Rhythm> rhythm_;
    std::unordered_map<LinkId, double> peak_sum_;
    std::unordered_map<LinkId, std::vector<std::pair<size_t, double>>> on_link_;   // (job, peak), job order
    std::mt19937_64 rng_;
};

std::string family_line(const PhaseFamily& f, int joined) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "phase family P=%.1fms windows=%d members=%zu free=%zu dirty=%d overload=%.2f %s",
                  f.period_s * 1e3, f.groups, f.members.size(), f.free_riders.size(), f.dirty, f.overload,
                  f.kept ? "kept" : "new");
    std::string s = buf;
    if (joined > 0) s += " (+" + std::to_string(joined) + " joined)";
    return s;
}

}  // namespace

PhaseGroupPlan plan_phase_groups(const Topology& topo, const std::vector<JobProfile>& jobs,
                                 const std::vector<size_t>& eligible, const std::map<JobId, JobDecision>& previous,
                                 const std::map<JobId, SwitchId>& owners, const PhaseGroupOptions& opts,
                                 double now_s) {
    PhaseGroupPlan plan;
    Planner pl(topo, jobs, opts);

    // A family taken: members with room in every window run free, the rest
    // are gated in theirs; an overloaded family gets a longer period.
    // The first `in_force` members are in force in it (none, in a new family).
    // `riders`: its free riders in force.
    auto take = [&](PhaseFamily& f, std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w,
                    size_t in_force, std::vector<size_t> riders) {
        const int joined = f.kept ? static_cast<int>(members.size() - in_force) : 0;
        for (size_t i : pl.free_riders(members, win, w, in_force)) riders.push_back(i);
        for (size_t i : riders) {
            f.free_riders.push_back(jobs[i].id);
            JobDecision d;   // free; the window count marks it a free rider for the next epoch
            d.groups = f.groups;
            plan.jobs[jobs[i].id] = d;
        }
        f.dirty = pl.dirty(members, win, w);
        f.overload = w.total();
        // Overloaded members are late for their next slot and delay others:
        // more slack for all, within every member's overload stretch, absorbs
        // part of it. A family in force keeps its period.
        if (f.dirty > 0 && !f.kept) {
            const double P = f.period_s;
            double most = P * (1 + opts.overload_slack);
            for (size_t i : members) most = std::min(most, pl.target(i) * (1 + opts.overload_stretch));
            const double longer = std::floor(most / opts.period_step_s + kEps) * opts.period_step_s;
            if (longer > P && pl.groups_for(members, longer) == f.groups) f.period_s = longer;
        }
        for (size_t m = 0; m < members.size(); ++m) {
            f.members.push_back(jobs[members[m]].id);
            plan.jobs[jobs[members[m]].id] = pl.decision(f, win[m]);
        }
        plan.explain += family_line(f, joined) + "\n";
        plan.families.push_back(std::move(f));
    };

    // Families in force: same period, origin and window count in `previous`.
    using Key = std::tuple<double, double, int>;
    std::map<Key, std::vector<std::pair<size_t, int>>> kept;   // key -> (job, window)
    std::vector<size_t> newcomers, riding;   // riding: free riders of a family of K windows last epoch
    for (size_t i : eligible) {
        if (!pl.contended(i)) continue;
        auto p = previous.find(jobs[i].id);
        if (p != previous.end() && p->second.gated && p->second.group >= 0 && p->second.groups >= 2 &&
            pl.fits(i, p->second.period_s, p->second.groups, true))
            kept[{p->second.period_s, p->second.origin_s, p->second.groups}].emplace_back(i, p->second.group);
        else if (p != previous.end() && !p->second.gated && p->second.group < 0 && p->second.groups >= 2)
            riding.push_back(i);
        else
            newcomers.push_back(i);
    }
    // A rider's mark is its family's window count, not its family: of the
    // families in force with that count whose period it fits, it rides with
    // the one whose members load its links most (the first in key order on a
    // tie). Taken as a rider of another, it met its own family's members at
    // their peak in every window, found no room and was planned again.
    std::map<Key, std::vector<size_t>> riders_of;
    for (size_t r : riding) {
        const Key* best = nullptr;
        double most = -1;
        for (const auto& [key, seats] : kept) {
            if (seats.size() < 2 || std::get<2>(key) != previous.at(jobs[r].id).groups ||
                !pl.fits(r, std::get<0>(key), std::get<2>(key), true))
                continue;
            const double load = pl.shared_load(r, seats);
            if (load > most + kEps) most = load, best = &key;
        }
        if (best != nullptr) riders_of[*best].push_back(r);
    }
    for (auto& [key, seats] : kept) {
        if (seats.size() < 2) {
            newcomers.push_back(seats.front().first);   // a family of one is none
            continue;
        }
        PhaseFamily f;
        std::tie(f.period_s, f.origin_s, f.groups) = key;
        f.kept = true;
        std::vector<size_t> members;
        std::vector<int> win;
        for (const auto& [i, g] : seats) {
            members.push_back(i);
            win.push_back(g);
        }
        // Free riders in force stay free while they fit the period and the
        // windows as they stood (they count in every window, as background,
        // before newcomers join). Made to rejoin as newcomers, beside other
        // newcomers all at their peak, they found no room and left the
        // family (daemons.free_rider, when periods came in apart).
        WindowLoads w = pl.placed_loads(members, win, f.groups);
        // A rider is checked against the jobs outside the family that were
        // there last epoch and the riders kept before it: this epoch's
        // newcomers and the riders still to check do not count against it.
        WindowLoads established = pl.placed_loads(members, win, f.groups, riding, newcomers);
        std::vector<size_t> riders;
        for (size_t r : riders_of[key]) {
            if (pl.room_everywhere(r, established)) {
                riders.push_back(r);
                established.add_background(pl.uses(r, established));
            } else {
                newcomers.push_back(r);   // no room left: it may still take a window
            }
            riding.erase(std::find(riding.begin(), riding.end(), r));
        }
        pl.join(members, win, w, newcomers, f.period_s, f.groups);
        take(f, members, win, w, seats.size(), std::move(riders));
    }

    newcomers.insert(newcomers.end(), riding.begin(), riding.end());   // their family is gone, or its period no longer fits

    // New families from the rest, longest target first: each takes every
    // remaining job its period fits.
    std::stable_sort(newcomers.begin(), newcomers.end(),
                     [&](size_t a, size_t b) { return pl.target(a) > pl.target(b); });
    std::vector<bool> taken(jobs.size(), false);
    for (size_t seed : newcomers) {
        if (taken[seed]) continue;
        const double P = std::ceil(pl.target(seed) / opts.period_step_s - kEps) * opts.period_step_s;
        std::vector<size_t> members;
        for (size_t i : newcomers)
            if (!taken[i] && pl.target(i) <= P + kEps && P <= pl.target(i) * (1 + opts.max_stretch) + kEps)
                members.push_back(i);
        const int K = pl.groups_for(members, P);
        for (size_t i : members) taken[i] = true;   // tried once: in this family or left to the owners
        if (K < 2 || members.size() < 2) continue;
        std::set<SwitchId> owned_by;
        for (size_t i : members) {
            auto o = owners.find(jobs[i].id);
            owned_by.insert(o != owners.end() ? o->second : -1);
        }
        if (owned_by.size() == 1) continue;   // one owner plans them all, more finely
        PhaseFamily f;
        f.period_s = P;
        f.origin_s = now_s;
        f.groups = K;
        WindowLoads w(K, pl.background(members));
        std::vector<int> win = pl.greedy(members, w);
        // A short probe first: where the other jobs' load already overloads
        // the windows (a mix of models), annealing does not help, and a
        // family far past the dirty share is refused at a fortieth of the cost.
        // A small family has few assignments (K^n): a hundred moves per
        // assignment visit them all many times over.
        std::int64_t budget = std::min(opts.max_moves, opts.moves_per_job * static_cast<std::int64_t>(members.size()));
        for (std::int64_t states = 100, m = 0; m < static_cast<std::int64_t>(members.size()) && states < budget; ++m) {
            states *= K;
            if (m + 1 == static_cast<std::int64_t>(members.size())) budget = std::min(budget, states);
        }
        const double allowed = opts.max_dirty_share * double(members.size()) + kEps;
        pl.anneal(members, win, w, budget / 40, &plan.moves);
        if (w.total() > w.unavoidable() + kEps && pl.dirty(members, win, w) <= 2 * allowed)
            pl.anneal(members, win, w, budget - budget / 40, &plan.moves);
        f.dirty = pl.dirty(members, win, w);
        f.overload = w.total();
        if (f.dirty > allowed) {
            plan.explain += family_line(f, 0) + " refused: too many members overload a link\n";
            for (size_t i : members) plan.refused.push_back(jobs[i].id);
            continue;
        }
        take(f, members, win, w, 0, {});
    }
    return plan;
}

}  // namespace harmonics
