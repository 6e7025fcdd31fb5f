// Brute-force enumerator of the slot-grid problem: every combination of the
// jobs' candidate shifts, scored with predicted_cost. The reference the exact
// searches (harmonics' branch and bound, optimal's MILP) are tested against on
// small instances.
#pragma once

#include <cstdint>

#include "policy/slot_grid.h"

namespace harmonics {

// The minimum-cost assignment (ties: the lexicographically first shift
// vector), optimal = true. When the number of combinations exceeds
// `max_combinations`, returns an empty shift vector and optimal = false.
SlotSolution brute_force(const SlotProblem& p, std::uint64_t max_combinations = 20000000);

}  // namespace harmonics
