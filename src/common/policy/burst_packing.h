// Where a collision-free plan leaves its free time. Bursts packed back to
// back gather the free time in one gap, where a newcomer fits without moving
// running jobs; but a burst packed flush against the next one collides with
// it whenever its job is released a hair late (the OS, a straggling rank), so
// bursts keep a margin, and where the free time is too short for a margin
// everywhere it is shared out instead.
#ifndef HARMONICS_POLICY_BURST_PACKING_H
#define HARMONICS_POLICY_BURST_PACKING_H

#include "policy/slot_grid.h"

#include <vector>

namespace harmonics {

// Packs bursts without adding excess: open jobs in order of shift, each
// moved to start `margin` of its period (rounded up to slots) after the
// previous one's burst ends when that is no worse. Then an open job still
// closer than that margin to another job's burst (a newcomer squeezed between
// running jobs, or a leaf whose free time is short) moves by less than the
// margin to where its nearest neighbour is farthest, again adding no excess.
SlotSolution compact_bursts(const SlotProblem& p, const SlotSolution& start, double margin);

// Per job of a plan: how many slots its bursts may run late before they reach
// a slot where another gated job's burst leaves no room for them, at most
// cap_frac of its period (rounded up to slots). What the gate lets a late job
// start at once with (JobDecision::late_s).
std::vector<int> late_slack_slots(const SlotProblem& p, const std::vector<int>& shift, double cap_frac);
// The same for the jobs `which` marks only (0 for the others): each job's
// allowance costs a pass over the hyperperiod.
std::vector<int> late_slack_slots(const SlotProblem& p, const std::vector<int>& shift, double cap_frac,
                                  const std::vector<bool>& which);

}  // namespace harmonics

#endif
