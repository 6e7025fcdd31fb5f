// The slot-grid problem (policy/slot_grid.h) as a mixed-integer linear
// program, solved by COIN-OR CBC through its C interface:
//
//   x[j,s] in {0,1}   job j takes candidate shift s;  sum_s x[j,s] = 1
//   e[l,t] >= 0       excess on link l in slot t of the hyperperiod
//   e[l,t] - sum_{j,s} d_jl[(t - s) mod P_j]·x[j,s] >= background_l + fixed_l(t) - 1
//   minimise  sum_l weight_l/H · sum_t e[l,t]     (+ the stretch penalty, a constant)
//
// Rows (l,t) whose demand cannot exceed the capacity whatever the shifts are
// left out. Several independent problems (components of the cluster that
// share no link) go into one model, each with its own hyperperiod. Built only
// with CBC (HAVE_CBC).
#pragma once

#include <vector>

#include "policy/slot_grid.h"

namespace harmonics {

struct MilpReport {
    bool optimal = false;     // CBC proved optimality within the time limit
    double cost = 0;          // predicted cost of the returned shifts, summed over problems
    double bound = 0;         // CBC's lower bound on the summed cost
    double gap = 0;           // (cost - bound) / cost, 0 when optimal
    int columns = 0, rows = 0;
    long nonzeros = 0;
    double solve_s = 0;       // wall time of building and solving
};

// One solution per problem (SlotSolution::gap is the model's relative gap).
// Stops after time_limit_s and returns the best assignment found: CBC's
// incumbent, or the greedy start it was given when CBC found nothing better.
std::vector<SlotSolution> solve_milp(const std::vector<SlotProblem>& problems, double time_limit_s,
                                     MilpReport* report = nullptr);

SlotSolution solve_milp(const SlotProblem& problem, double time_limit_s, MilpReport* report = nullptr);

// Nonzeros of the model solve_milp would build (its size, before solving).
long milp_nonzeros(const std::vector<SlotProblem>& problems);

}  // namespace harmonics
