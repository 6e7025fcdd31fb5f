// The phase-family plan's working state (policy/phase_groups.h): every
// cross-leaf job's rhythm and the links it shares, and the steps a plan is
// made of — which jobs fit a period, window loads against the jobs outside
// the family, greedy placement, annealing, free riders, newcomers joining a
// family in force. plan_phase_groups (phase_groups.cpp) strings them
// together. Internal to the phase-group plan: no I/O, nothing else includes it.
#ifndef HARMONICS_POLICY_PHASE_PLANNER_H
#define HARMONICS_POLICY_PHASE_PLANNER_H

#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy/phase_groups.h"
#include "policy/phase_windows.h"

namespace harmonics::phase {

class Planner {
public:
    Planner(const Topology& topo, const std::vector<JobProfile>& jobs, const PhaseGroupOptions& o);

    // A job whose links cannot be overloaded whatever the phases.
    bool contended(size_t i) const;
    double target(size_t i) const { return rhythm_[i].T * (1 + o_.guard); }
    // Whether job i may be a member of a family at period P with K windows:
    // P at least its guarded T and within the stretch allowed, its burst and
    // a guard within one window. `kept`: the family is in force, and the
    // measurements may have moved by the keep tolerance. `joining`: job i
    // would join a family in force as a newcomer, whose period it need only
    // keep with half the guard to spare: the same model measured on another
    // leaf's rank comes out a little slower (daemons.groups: 200.4 against
    // 200.0 ms), and refused, it stayed out of its family for seconds.
    bool fits(size_t i, double P, int K, bool kept = false, bool joining = false) const;
    // The windows a family's period holds: each the longest member burst plus a guard.
    int groups_for(const std::vector<size_t>& members, double P) const;
    // What a period P costs job i on every iteration: P / T - 1.
    double stretch(size_t i, double P) const { return P / rhythm_[i].T - 1; }
    // Job i's slowdown running free beside every job on its links, each free
    // at its own rhythm (policy/free_running.h), the worst of its links.
    // Each link's estimate is computed once, for all its jobs.
    double free_slowdown(size_t i) const;
    // Where each job's bursts stand now: its next one (its old gate's next
    // slot, or one measured period after its latest collective) and its
    // period; a job whose hooks gave no latest collective has none.
    void set_phases(const std::map<JobId, JobDecision>& previous, double now_s);
    // Job i's slowdown running free as the jobs on its links stand now:
    // every job's bursts where its phase puts them, over the next `horizon_s`,
    // each slowed where the link is over capacity (fluid sharing: a burst
    // goes at 1 / load of its pace there), the lost time over its isolated
    // period. < 0 where a job on one of its busy links has no phase.
    double standing_slowdown(size_t i, double horizon_s) const;
    // The peak load a family's members (job, window) put on the links job i crosses.
    double shared_load(size_t i, const std::vector<std::pair<size_t, int>>& seats) const;

    // On each link the members cross, the peak load of every job outside
    // `members`: those run at phases the family does not choose (free, or
    // gated by an owner on another period), so a window is clean only if it
    // fits beside all of them at once. (Their average instead let families
    // form in mixes of thirteen models, whose members then collided with
    // free jobs and missed slots: 1,024 nodes, 0.00 -> -0.09 % against fair.)
    // Only the jobs on the members' links are visited, in job order.
    // `skip`: jobs left out of the background as well (none by default).
    std::map<LinkId, double> background(const std::vector<size_t>& members, const std::vector<size_t>& skip = {}) const;

    std::vector<std::pair<int, double>> uses(size_t i, const WindowLoads& w) const;

    // The window adding the least overload (then the least loaded one).
    int best_window(const std::vector<std::pair<int, double>>& u, const WindowLoads& w, double* added) const;

    // Windows for a new family: greedy placement, most links first.
    std::vector<int> greedy(const std::vector<size_t>& members, WindowLoads& w) const;

    // Simulated annealing on the summed overload, from `win` (whose loads
    // `w` holds), for `budget` moves or until no assignment could overload
    // less; leaves the best assignment in `win` and `w`. The hot loop works
    // on flat arrays: a move touches only the moved job's links in its old
    // and new window.
    void anneal(const std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::int64_t budget,
                std::int64_t* moves);

    // Members whose burst fits beside every other window on all their links
    // need no window: they run free at their own T instead of the family's
    // longer P. Each one freed then loads every window, which leaves the next
    // less room, so the order matters: jobs not gated in the family now
    // first (the first `in_force` members are; a free rider stays free
    // rather than trade places with one of them, epoch after epoch), then
    // the most stretched (the shortest targets), then by id.
    std::vector<size_t> free_riders(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w,
                                    size_t in_force) const;

    // A family's loads with `members` in their windows `win`, on their links
    // and those of `also` (placed later, or not at all), against the peak of
    // every other job but `skip`.
    WindowLoads placed_loads(const std::vector<size_t>& members, const std::vector<int>& win, int K,
                             const std::vector<size_t>& also = {}, const std::vector<size_t>& skip = {}) const;

    // Newcomers that fit a family in force (`members` in `win`, loads in
    // `w`) join it where they overload no link; those that join leave
    // `newcomers`. They are placed together: each beside the members and
    // those placed before it, against every other job at its peak but the
    // other candidates (newcomers that came together, each at its peak in
    // the others' background, all found no room: daemons.free_rider). One
    // that finds no window drops out, and the rest are placed again with it
    // at its peak, until all that are left fit.
    void join(std::vector<size_t>& members, std::vector<int>& win, WindowLoads& w, std::vector<size_t>& newcomers,
              double P, int K) const;

    // Whether job i (on `w`'s links) fits beside every window of `w`.
    bool room_everywhere(size_t i, const WindowLoads& w) const;

    int dirty(const std::vector<size_t>& members, const std::vector<int>& win, WindowLoads& w) const;

    JobDecision decision(const PhaseFamily& f, int g) const;

private:
    const std::vector<JobProfile>& jobs_;
    const PhaseGroupOptions& o_;
    std::vector<Rhythm> rhythm_;
    std::unordered_map<LinkId, double> peak_sum_;
    std::unordered_map<LinkId, std::vector<std::pair<size_t, double>>> on_link_;   // (job, peak), job order
    std::mt19937_64 rng_;
    mutable std::unordered_map<LinkId, std::vector<double>> free_on_link_;   // per link, in on_link_ order
    std::vector<double> next_burst_, burst_period_;   // per job; next_burst_ < 0: not known
    double now_s_ = 0;
};

}  // namespace harmonics::phase

#endif
