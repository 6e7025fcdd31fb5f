#include "policy/outrun.h"

#include <algorithm>

#include "policy/harmonics_local.h"
#include "policy/holds.h"

namespace harmonics {

bool outruns(double period_s, const JobDecision& d, double tolerance) {
    return d.gated && d.period_s > 0 && period_s > d.period_s * (1 + tolerance);
}

double family_outrun_floor_s(double period_s, const JobDecision& d) {
    return outruns(period_s, d, kFamilyFarOutrunTolerance) ? 0.0 : kFamilyOutrunS;
}

bool OutrunWatch::seen(JobId id, const JobDecision& d, bool outran, double now_s, double min_s) {
    if (!outran) {
        runs_.erase(id);
        return false;
    }
    auto [r, fresh] = runs_.try_emplace(id);
    if (fresh || !same_schedule(r->second.under, d)) r->second = Run{d, 0, now_s};
    if (++r->second.epochs < kOutrunEpochs ||
        now_s - r->second.since_s < std::max(kOutrunIterations * d.period_s, min_s) - 1e-9)
        return false;
    runs_.erase(r);
    return true;
}

void OutrunWatch::forget_all_but(const std::set<JobId>& present) { forget_departed(runs_, present); }

}  // namespace harmonics
