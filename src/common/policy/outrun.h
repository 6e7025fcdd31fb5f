// A gated job that iterates past the period its plan gave it misses its slot
// and the gate holds it to the next one, iteration after iteration: the
// plan's forecast failed for it. Two unrelated models on the same leaves
// rarely share a harmonic period, and the plans they take instead can leave
// a ring 10 % past its period for its whole life (doc/scale.md, "Stop 36").
// What the Global Coordinator and harmonics-schedd watch to run such a job
// free (LocalTuning::free_outrunning).
#pragma once

#include <map>
#include <set>

#include "model/job.h"
#include "policy/policy.h"

namespace harmonics {

// How long a job must outrun one decision before it runs free: kOutrunEpochs
// epochs in a row, and at least kOutrunIterations of its periods. The first
// measurements under a new plan still hold iterations from before it: on the
// emulated testbed (1 s epochs) two VGG16 rings gated at 1.16 s measured
// 1.27 s three epochs into their plan, two or three iterations.
constexpr int kOutrunEpochs = 3;
constexpr int kOutrunIterations = 10;

// Phase-family members are the coordinator's own plan: after a family is
// made dozens of them run 3-15 % past its period for several epochs and
// still gain from the gate (freeing them at the keep tolerance cost 2-5
// points, doc/scale.md "Stop 36"). One that stays more than
// kFamilyOutrunTolerance past the family's period for kFamilyOutrunS (and
// kOutrunIterations periods) misses its slots for good: a gpt3-6.7b ring
// beside dlrm jobs ran 16 % past its 4.57 s for its whole life and waited
// 29 % of it at the gate (doc/scale.md, "Stop 39"). It leaves its family
// and runs free for a hold, doubled each further time it has to (holds.h).
// Measured with harmonics-sim: 5 % from 0 freed bert-large members still
// settling at 1,024 nodes (+5.24 -> +0.60 %);
// with the 30 s floor the only aligned row that moves loses 0.03 points.
constexpr double kFamilyOutrunTolerance = 0.05;
constexpr double kFamilyOutrunS = 30;

// A member more than kFamilyFarOutrunTolerance past the family's period is
// not settling: it misses every slot and waits most of a period each
// iteration. It leaves as a gated job outside families does, after
// kOutrunEpochs epochs and kOutrunIterations periods, without the 30 s.
// A family formed from the first jobs of a busy 4:1 cluster (bert-large,
// random phases) met the later ones at their peak; its members ran 40-100 %
// past its 232 ms period for 31 s (-2.39 % against fair; -0.51 % with this
// rule, doc/scale.md "Stop 43"). The largest settling seen is 15 %.
constexpr double kFamilyFarOutrunTolerance = 0.25;

// How long a member whose iterations take `period_s` (net of the gate's
// holds) must outrun its family's decision `d` before it leaves:
// kFamilyOutrunS, or 0 (the plain outrun count) when it is far past.
double family_outrun_floor_s(double period_s, const JobDecision& d);

// Whether a job gated at `d` whose iterations take `period_s` (measured net
// of the gate's holds) runs more than `tolerance` of d's period past it.
// False while the period is unknown (0).
bool outruns(double period_s, const JobDecision& d, double tolerance);

// Per job, the epochs in a row it has outrun one decision.
class OutrunWatch {
public:
    // One epoch's look at job `id`, gated at `d`, at `now_s`: true when it
    // has now outrun that same decision long enough (kOutrunEpochs epochs in
    // a row, kOutrunIterations periods since the first; the count then
    // starts again). A job that did not outrun, or whose decision changed,
    // starts from nothing. `min_s`: and at least this long since the first.
    bool seen(JobId id, const JobDecision& d, bool outran, double now_s, double min_s = 0);
    void forget_all_but(const std::set<JobId>& present);

private:
    struct Run {
        JobDecision under;
        int epochs = 0;
        double since_s = 0;
    };
    std::map<JobId, Run> runs_;
};

}  // namespace harmonics
