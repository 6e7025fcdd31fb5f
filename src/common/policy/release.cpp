// The release rule of a gated job (see release.h).
#include "policy/release.h"

#include <algorithm>
#include <cmath>

namespace harmonics {

double gate_phase_s(const JobDecision& d) {
    const double x = std::fmod(d.origin_s + d.shift_s, d.period_s);
    return x < 0 ? x + d.period_s : x;
}

double late_allowance_s(const JobDecision& d, double late_tolerance_frac) {
    const double cap = std::max(0.0, late_tolerance_frac) * d.period_s;
    return d.late_s >= 0 ? std::min(d.late_s, cap) : cap;
}

double latest_slot_s(const JobDecision& d, double t_s) {
    const double base = d.origin_s + d.shift_s;
    if (t_s <= base) return base;
    return base + std::floor((t_s - base) / d.period_s + 1e-9) * d.period_s;
}

double next_release_s(const JobDecision& d, double ready_s, ReleaseMemory& mem, double late_tolerance_frac) {
    if (!d.gated || d.period_s <= 0) return ready_s;
    const double P = d.period_s;
    const double base = d.origin_s + d.shift_s;
    const double eps = 1e-9 * P;
    double late = 0;
    double release = ready_s;
    if (ready_s <= base) {
        release = base;  // the grid starts at origin + shift (iteration 0)
    } else {
        const double slot = latest_slot_s(d, ready_s);
        late = std::max(0.0, ready_s - slot);
        const bool catching_up = mem.late_s <= eps || late < mem.late_s - eps + mem.noise_s;
        const bool go = late <= eps || late <= late_allowance_s(d, late_tolerance_frac) + eps ||
                        (catching_up && late <= std::max(0.0, late_tolerance_frac) * P + eps);
        if (!go) {
            release = slot + P;
            late = 0;
        }
    }
    mem.late_s = late <= eps ? 0 : late;
    return release;
}

double next_release_s(const JobDecision& d, double ready_s, double late_tolerance_frac) {
    ReleaseMemory on_slot;
    return next_release_s(d, ready_s, on_slot, late_tolerance_frac);
}

}  // namespace harmonics
