// The delay per iteration that a slot-grid plan's collisions cost its jobs:
// each slot's excess on a link shared by the jobs loading it then, in
// proportion to their demand (fair sharing), a job's share counted at its own
// rate. What the slack rule, the coordinator's conflict check and the lock
// points (lock_points.h) all read.
#pragma once

#include <vector>

#include "policy/slot_grid.h"

namespace harmonics {

// Per job of a plan, the delay per iteration (seconds) its collisions cost
// it; the uplink and downlink carry the same rings, so a job's delay is its
// worst link's, not their sum.
std::vector<double> collision_delays_s(const SlotProblem& p, const std::vector<int>& shift);

// Per job of a plan, its delay (seconds) iteration by iteration over the
// hyperperiod (or horizon): where collision_delays_s gives the mean, this
// shows where the collisions fall.
std::vector<std::vector<double>> iteration_delays_s(const SlotProblem& p, const std::vector<int>& shift);

// Job k's delay of collision_delays_s with its shift at every slot x of its
// period and every other job at `shift`: one profile over x, in the time of
// a few evaluations (per demand level of k's pattern the others' cost folded
// onto k's period, a run of k's slots then a range sum).
std::vector<double> delay_by_shift(const SlotProblem& p, const std::vector<int>& shift, size_t k);

}  // namespace harmonics
