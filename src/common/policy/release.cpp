// The release rule of a gated job (see release.h).
#include "policy/release.h"

#include <algorithm>
#include <cmath>

namespace harmonics {

double next_release_s(const JobDecision& d, double ready_s, double late_tolerance_frac) {
    if (!d.gated || d.period_s <= 0) return ready_s;
    const double P = d.period_s;
    const double base = d.origin_s + d.shift_s;
    if (ready_s <= base) return base;  // the grid starts at origin + shift (iteration 0)
    // The latest slot at or before ready (within rounding of 1e-9 periods).
    const double k = std::floor((ready_s - base) / P + 1e-9);
    const double slot = base + k * P;
    const double late = ready_s - slot;  // >= -1e-9·P
    if (late <= 1e-9 * P) return ready_s;  // on the slot: go
    if (late <= (std::max(0.0, late_tolerance_frac) + 1e-9) * P) return ready_s;  // a little late: go at once
    return slot + P;
}

}  // namespace harmonics
