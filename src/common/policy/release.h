// When a gated job's first collective of an iteration may start: the one
// release rule the simulator's gate and the NCCL plugin's hook both apply, so
// the simulator measures exactly what the hook does.
//
// A decision's slots are origin + shift + k·period, k >= 0 (the plan starts
// at origin + shift). A job ready at or before a slot waits for it. A job that
// missed the latest slot by a little goes at once: making it wait for the next
// slot would cost almost a whole period for being a hair late (a measured
// period jitters by a few percent), and on a busy link those lost periods are
// exactly what makes a gated plan lose to fair sharing. "A little" is the
// decision's late_s (how late its bursts may run before they reach another
// job's), or at most late_tolerance_frac of the period while the job is
// catching up: it was on its slot at its previous release, or is less late
// than then, or later by less than its own timing noise (a compute that
// jitters by a few percent makes a slip grow and shrink by itself). A job
// whose natural cycle is shorter than its period makes up such a slip by
// itself in a few iterations (a re-plan's new shifts are such slips too).
// One late by more than the gap behind it and not catching up would run
// into the next ring's slot every iteration, delaying that job in turn: a
// tightly packed leaf would settle into late rings colliding for ever. Such
// a job waits for its next slot, and so is pulled back onto its grid instead
// of running free.
#pragma once

#include "policy/policy.h"

namespace harmonics {

// Chosen by measurement with harmonics-sim (doc/evaluation.md, "Release
// tolerance"): the share of a period a job may be late and still go at once.
constexpr double kDefaultLateTolerance = 0.2;

// The latest slot origin + shift + k·period at or before t_s, k >= 0 (within
// rounding of 1e-9 periods); origin + shift when t_s is before it. Needs a
// period > 0.
double latest_slot_s(const JobDecision& d, double t_s);

// Where in its period a gated job's slots fall: origin + shift modulo the
// period, in [0, period). Needs a period > 0.
double gate_phase_s(const JobDecision& d);

// How late a job may be and still go at once (seconds).
double late_allowance_s(const JobDecision& d, double late_tolerance_frac = kDefaultLateTolerance);

// How many median absolute deviations of a job's own compute time make its
// timing noise (noise_slip_s). Chosen with harmonics-sim on testbed-paper
// under ±3/5/10 % noise (doc/scale.md, "Stop 27"): 2 left a third of the
// noise's cost, 4 gained nothing over 3.
constexpr double kNoiseSlipMads = 3;

// What the gate remembers of a job from one release to the next.
struct ReleaseMemory {
    double late_s = 0;   // how late past its slot the previous release went (0: on a slot)
    // The job's own timing noise as the gate measured it (noise_slip_s): a
    // slip that grew by less than this since the previous release is the
    // job's compute jittering, not its ring drifting into the next one's
    // slot, and still counts as catching up. 0: none measured.
    double noise_s = 0;
};

// The timing noise of a job whose compute times of its latest iterations
// have median absolute deviation `compute_mad_s`.
inline double noise_slip_s(double compute_mad_s) { return kNoiseSlipMads * compute_mad_s; }

// The earliest time >= ready_s the job's first collective may start. Returns
// ready_s for a job that is not gated (or has no period). `mem` is the job's
// memory, updated; without one the job counts as on its slot last time.
double next_release_s(const JobDecision& d, double ready_s, ReleaseMemory& mem,
                      double late_tolerance_frac = kDefaultLateTolerance);
double next_release_s(const JobDecision& d, double ready_s, double late_tolerance_frac = kDefaultLateTolerance);

}  // namespace harmonics
