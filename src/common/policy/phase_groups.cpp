#include "policy/phase_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "policy/gate_waits.h"
#include "policy/phase_planner.h"

namespace harmonics {
namespace {

using phase::kEps;
using phase::Planner;
using phase::WindowLoads;

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
    pl.set_phases(previous, now_s);
    // How many of n members a family may leave overloaded.
    auto allowed = [&](size_t n) { return opts.max_dirty_share * double(n) + kEps; };
    // Whether job i may take period P: its target fits under P, within max_stretch.
    auto fits_period = [&](size_t i, double P) {
        return pl.target(i) <= P + kEps && P <= pl.target(i) * (1 + opts.max_stretch) + kEps;
    };

    // The longest period an overloaded family may take: within every
    // member's overload stretch, on the period grid.
    auto stretch_cap = [&](const std::vector<size_t>& members) {
        double most = 1e300;
        for (size_t i : members) most = std::min(most, pl.target(i) * (1 + opts.overload_stretch));
        return std::floor(most / opts.period_step_s + kEps) * opts.period_step_s;
    };

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
            const double slack = std::floor(P * (1 + opts.overload_slack) / opts.period_step_s + kEps) * opts.period_step_s;
            const double longer = std::min(slack, stretch_cap(members));
            if (longer > P && pl.groups_for(members, longer) == f.groups) f.period_s = longer;
        }
        for (size_t m = 0; m < members.size(); ++m) {
            f.members.push_back(jobs[members[m]].id);
            plan.jobs[jobs[members[m]].id] = pl.decision(f, win[m]);
        }
        plan.explain += family_line(f, joined) + "\n";
        plan.families.push_back(std::move(f));
    };

    // A new family of `members` at period P in K windows: greedy windows,
    // then annealing; its dirty members and overload are set.
    struct Fresh {
        PhaseFamily f;
        std::vector<int> win;
        WindowLoads w;
    };
    auto fresh = [&](const std::vector<size_t>& members, double P, int K) {
        Fresh r{PhaseFamily{}, {}, WindowLoads(K, pl.background(members))};
        r.f.period_s = P;
        r.f.origin_s = now_s;
        r.f.groups = K;
        r.win = pl.greedy(members, r.w);
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
        pl.anneal(members, r.win, r.w, budget / 40, &plan.moves);
        if (r.w.total() > r.w.unavoidable() + kEps && pl.dirty(members, r.win, r.w) <= 2 * allowed(members.size()))
            pl.anneal(members, r.win, r.w, budget - budget / 40, &plan.moves);
        r.f.dirty = pl.dirty(members, r.win, r.w);
        r.f.overload = r.w.total();
        return r;
    };

    // What the members' first slots in family f cost them: each one's wait
    // for its window (from its old gate's slot, or its next collective
    // running free) over its time left, summed.
    auto first_waits = [&](const PhaseFamily& f, const std::vector<size_t>& members, const std::vector<int>& win) {
        double sum = 0;
        for (size_t m = 0; m < members.size(); ++m) {
            const JobDecision d = pl.decision(f, win[m]);
            sum += first_wait_charge(jobs[members[m]], previous, d.origin_s + d.shift_s, d.period_s, now_s);
        }
        return sum;
    };

    // The log line of a new family not formed: what it would cost its n
    // members (stretch, and first waits where >= 0) against running free,
    // all summed over them; `standing` of them judged as their bursts stand.
    auto not_formed = [](double P, int K, size_t n, double stretch, double waits, double free, int standing) {
        char waited[64] = "", line[300];
        if (waits >= 0) std::snprintf(waited, sizeof waited, " and its first slots %.1f %%", 100 * waits / double(n));
        std::snprintf(line, sizeof line,
                      "phase family P=%.1fms windows=%d members=%zu not formed: it would stretch them %.1f %%%s, "
                      "running free costs them %.1f %%%s\n",
                      P * 1e3, K, n, 100 * stretch / double(n), waited, 100 * free / double(n),
                      standing > 0 ? (" (" + std::to_string(standing) + " as their bursts stand)").c_str() : "");
        return std::string(line);
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
        // Members in force that came to overload a link (jobs that stayed
        // outside count at their peak) past the share a new family may have:
        // planned again as one new family with its free riders, joiners and
        // the newcomers its period fits, if that family would be within the
        // share; else it stays as it is (a member that left to run free
        // overloads the rest wherever they stand). Built piecemeal from jobs
        // learnt one by one, such a family stayed overloaded for good
        // (doc/scale.md, "Stop 40").
        if (const int dirty = pl.dirty(members, win, w); dirty > allowed(members.size())) {
            std::vector<size_t> again = members;
            again.insert(again.end(), riders.begin(), riders.end());
            for (size_t i : newcomers)
                if (fits_period(i, f.period_s)) again.push_back(i);
            char line[200];   // the family in force, then what became of it
            const int n = std::snprintf(line, sizeof line, "phase family P=%.1fms windows=%d members=%zu dirty=%d ",
                                        f.period_s * 1e3, f.groups, members.size(), dirty);
            const std::string in_force(line, static_cast<size_t>(std::max(0, n)));
            const int K = pl.groups_for(again, f.period_s);
            if (K >= 2) {
                Fresh r = fresh(again, f.period_s, K);
                if (r.f.dirty <= allowed(again.size())) {
                    plan.explain += in_force + "planned again: too many members overload a link\n";
                    for (size_t i : again) {
                        auto n = std::find(newcomers.begin(), newcomers.end(), i);
                        if (n != newcomers.end()) newcomers.erase(n);
                    }
                    take(r.f, again, r.win, r.w, 0, {});
                    continue;
                }
            }
            // Planned again it would overload as much. One that has taken
            // all the overload stretch it may, with more than the dissolve
            // share of its members overloaded still, costs them more than it
            // saves: they go back to their owners, held out of new families
            // as a refused family's are. (One at its own period, overloaded
            // by a member that left to run free, stays: daemons.family_far.)
            if (dirty > opts.dissolve_dirty_share * double(members.size()) + kEps &&
                f.period_s >= stretch_cap(members) - kEps) {
                plan.explain += in_force + "dissolved: planned again, it would overload as much\n";
                for (size_t i : members) plan.refused.push_back(jobs[i].id);
                for (size_t i : riders) plan.refused.push_back(jobs[i].id);
                continue;
            }
            // Else it stays as it is.
            plan.explain += in_force + "stays: planned again, it would overload as much\n";
        }
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
            if (!taken[i] && fits_period(i, P))
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
        double stretch = 0, free = 0, bound = 0;
        int standing = 0;
        if (opts.free_running_factor > 0) {
            // What running free costs each member: as their bursts stand
            // where every job on its links has a phase, else the queueing
            // estimate (low: hence the factor).
            for (size_t i : members) {
                stretch += pl.stretch(i, P);
                const double left = time_left_s(jobs[i], now_s);
                const double horizon = opts.standing_periods * pl.target(i);
                const double c =
                    opts.standing_periods > 0 ? pl.standing_slowdown(i, left > 0 ? std::min(left, horizon) : horizon) : -1;
                const double q = c >= 0 ? c : pl.free_slowdown(i);
                standing += c >= 0;
                free += q;
                bound += c >= 0 ? c : opts.free_running_factor * q;
            }
            if (stretch > bound + kEps) {
                plan.explain += not_formed(P, K, members.size(), stretch, -1, free, standing);
                continue;
            }
        }
        Fresh r = fresh(members, P, K);
        if (opts.charge_waits && opts.free_running_factor > 0) {
            const double waits = first_waits(r.f, members, r.win);
            if (stretch + waits > bound + kEps) {
                plan.explain += not_formed(P, K, members.size(), stretch, waits, free, standing);
                continue;
            }
        }
        if (r.f.dirty > allowed(members.size())) {
            plan.explain += family_line(r.f, 0) + " refused: too many members overload a link\n";
            for (size_t i : members) plan.refused.push_back(jobs[i].id);
            continue;
        }
        take(r.f, members, r.win, r.w, 0, {});
    }
    return plan;
}

}  // namespace harmonics
