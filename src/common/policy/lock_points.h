// Where a job that does not hold its collectives settles among gated ones.
//
// A job whose hooks only measure runs free at its own iteration time T_m. On
// a grid of period P_m > T_m it arrives earlier every period by the lead
// P_m - T_m, until its bursts run into gated bursts on a link; sharing the
// link then delays it, and where that delay per period equals the lead it
// stays: its bursts lock to the grid behind a gated burst, at period P_m.
// Contention to the left of such a point pushes it back later, an open link
// to the right lets it drift earlier again, so the point is stable. (On
// testbed-paper with a BERT-large measuring, planned at 177 ms for T = 174.1
// ms, it locks; a VGG16 planned at 118 ms for 112 ms needs 6 ms of delay per
// period, more than its neighbours' slack, and does not: doc/scale.md, stop 28.)
#pragma once

#include <vector>

namespace harmonics {

// The shifts where a job drifting by `lead_s` per period against the delay
// profile `delay_s` (slot_delays.h, delay_by_shift) comes to rest: delay at
// least the lead there, less one slot later. Empty when it never rests (the
// lead is never absorbed, or always exceeded, or there is no lead: its phase
// is then wherever it began).
std::vector<int> lock_points(const std::vector<double>& delay_s, double lead_s);

}  // namespace harmonics
