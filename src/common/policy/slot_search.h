// Harmonics' searches over the slot-grid problem (slot_grid.h): an exact
// branch and bound while the problem is small, and greedy insertion plus local
// search within a time budget beyond. Both score assignments with the same
// predicted cost as brute_force and the optimal MILP.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/slot_grid.h"

namespace harmonics {

struct SearchStats {
    std::int64_t nodes = 0;     // branch-and-bound nodes (or moves tried by local search)
    bool completed = false;     // the search finished within its budget
    // The searches' work meter: slot loads read or written so far. With
    // work_per_s > 0 a budget of S seconds is S * work_per_s of them instead
    // of S seconds of wall time, so the answer does not depend on the host's
    // load (the simulator; the daemons keep the wall clock).
    std::int64_t work = 0;
    double work_per_s = 0;
};

// Greedy insertion (heaviest jobs first, each at the shift adding the least
// excess) then best-response local search until no job can improve or the
// budget runs out. `warm` (one shift per job, may be null) is kept when it is
// no worse. Never proves optimality (optimal = false).
SlotSolution solve_greedy(const SlotProblem& p, double budget_s, const std::vector<int>* warm = nullptr,
                          SearchStats* stats = nullptr);

// Branch and bound: depth-first over jobs (heaviest first), shifts tried in
// order of added excess; a node is pruned when the excess already placed plus,
// for every job still open, its least added excess against the current loads
// (a lower bound, the excess being convex in load) cannot beat the incumbent.
// Starts from solve_greedy's answer. optimal = true when it finished in budget.
SlotSolution solve_exact(const SlotProblem& p, double budget_s, const std::vector<int>* warm = nullptr,
                         SearchStats* stats = nullptr);

// Off-grid polish of a full assignment: best-response local search where each
// job may also start right after (or end right before) another job's burst as
// currently placed, so bursts can sit back to back even where the candidate
// grid is too coarse. Returned shifts may lie off the candidate grid.
SlotSolution refine_with_anchors(const SlotProblem& p, const SlotSolution& start, double budget_s,
                                 SearchStats* stats = nullptr);

}  // namespace harmonics
