// Whether a gated job keeps its slots through a plan's collisions: the gate's
// release rule (release.h) replayed over the delays the plan predicts for it,
// slot by slot. The mean delay per iteration (collision_delays_s) hides where
// the collisions fall: rings at periods of their own slide through each other
// for several iterations in a row, each iteration a little later than its
// slack allows, and the gate then holds the job a whole period, every other
// iteration, where the mean said the delay fits.
#pragma once

#include <vector>

namespace harmonics {

// How many of its slots a gated job misses over `delay_s` (its delay in the
// iteration released at each successive slot, as iteration_delays_s gives
// them): released on its slot at first, each iteration takes `cycle_s` (its
// isolated iteration time, with whatever reserve the caller keeps) plus its
// delay; the gate lets it go late by up to `late_s` at once, by more only
// while it catches up, and otherwise holds it to the next slot. A cyclic plan
// repeats its delays: they are replayed twice, the misses of the second pass
// counted.
int slot_misses(const std::vector<double>& delay_s, double period_s, double cycle_s, double late_s, bool cyclic);

}  // namespace harmonics
