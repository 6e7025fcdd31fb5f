// When a gated job's first collective of an iteration may start: the one
// release rule the simulator's gate and the NCCL plugin's hook both apply, so
// the simulator measures exactly what the hook does.
//
// A decision's slots are origin + shift + k·period, k >= 0 (the plan starts
// at origin + shift). A job ready at or before a slot waits for it. A job that
// missed the latest slot by at most late_tolerance_frac·period goes at once:
// making it wait for the next slot would cost almost a whole period for being
// a hair late (a measured period jitters by a few percent), and on a busy
// link those lost periods are exactly what makes a gated plan lose to fair
// sharing. Later than that it waits for the next slot, so a job that drifted
// is pulled back onto its grid instead of running free.
#pragma once

#include "policy/policy.h"

namespace harmonics {

// Chosen by measurement with harmonics-sim (doc/evaluation.md, "Release
// tolerance"): the share of a period a job may be late and still go at once.
constexpr double kDefaultLateTolerance = 0.2;

// The earliest time >= ready_s the job's first collective may start. Returns
// ready_s for a job that is not gated (or has no period).
double next_release_s(const JobDecision& d, double ready_s, double late_tolerance_frac = kDefaultLateTolerance);

}  // namespace harmonics
