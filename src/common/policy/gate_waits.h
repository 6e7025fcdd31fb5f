// What a new gate costs a running job once: its next collective waits for
// the first slot of the new schedule. A leaf plan gains per iteration; the
// wait is paid at once and is worth it only over enough of the job's life.
// A gpt3-6.7b ring (4.5 s periods, 20-60 s jobs) gated at a random phase
// waits 2.3 s on average, 4-11 % of its life, where its collisions cost it
// 2-5 % (doc/scale.md, "Stop 44"). The Local Scheduler charges each plan the
// waits of the jobs it gates anew or moves, each over the job's time left
// (LocalTuning::charge_waits).
#pragma once

#include <map>

#include "model/job.h"
#include "policy/policy.h"

namespace harmonics {

// When `job`'s next collective will be ready if it runs on as it does now
// (free: one measured period after its latest, as often as needed to come
// at or after `now_s`); < 0 when its hooks gave no latest collective.
double next_collective_s(const JobProfile& job, double now_s);

// Where `job`'s next collective goes if nothing changes: its old gate's
// next slot at or after `now_s` (`previous` gated), else its next collective
// running free; < 0 when that is not known.
double next_release_s(const JobProfile& job, const JobDecision* previous, double now_s);

// The wait until the first slot of a gate at `phase_s` + k · `period_s`
// (absolute) for `job`, whose decision so far is `previous` (nullptr: none).
// A job gated before goes at its old slot and waits from there; a free one
// from its next collective, or half a period on average where that is not
// known.
double first_slot_wait_s(const JobProfile& job, const JobDecision* previous, double phase_s, double period_s,
                         double now_s);

// The job's time left (its end time less now, at least one period); 0 when
// its end is not known (no Slurm time limit reached the schedd): nothing is
// charged then.
double time_left_s(const JobProfile& job, double now_s);

// `wait_s` as a share of the time `job` has left, in the units of a plan's
// predicted cost (slowdown summed over jobs): a wait w over a remaining life
// R lengthens the job by w / R of it. 0 when the time left is not known.
double wait_charge(const JobProfile& job, double wait_s, double now_s);

// What a gate at `phase_s` + k · `period_s` costs `job` once: its first
// slot's wait (first_slot_wait_s, from its decision in `previous` if it has
// one) as a wait_charge. The Local Scheduler's plans and new phase families
// are charged the same.
double first_wait_charge(const JobProfile& job, const std::map<JobId, JobDecision>& previous, double phase_s,
                         double period_s, double now_s);

}  // namespace harmonics
