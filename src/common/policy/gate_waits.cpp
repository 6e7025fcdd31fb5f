#include "policy/gate_waits.h"

#include <algorithm>
#include <cmath>

namespace harmonics {

namespace {

// The period a job iterates at now: what its hooks measured, or its
// isolated period before they did.
double running_period_s(const JobProfile& job) {
    return job.measured_period_s > 0 ? job.measured_period_s : job.isolated_period_s;
}

// The first of t0 + k · period (k whole) at or after now.
double first_at_or_after(double t0, double period, double now) {
    return t0 >= now ? t0 : t0 + std::ceil((now - t0) / period) * period;
}

// x modulo period, in [0, period).
double wrap(double x, double period) {
    const double r = std::fmod(x, period);
    return r < 0 ? r + period : r;
}

}  // namespace

double next_collective_s(const JobProfile& job, double now_s) {
    const double period = running_period_s(job);
    if (!std::isfinite(job.last_collective_s) || period <= 0) return -1;
    return first_at_or_after(job.last_collective_s, period, now_s);
}

double next_release_s(const JobProfile& job, const JobDecision* previous, double now_s) {
    const bool gated = previous && previous->gated && previous->period_s > 0;
    return gated ? first_at_or_after(previous->origin_s + previous->shift_s, previous->period_s, now_s)
                 : next_collective_s(job, now_s);
}

double first_slot_wait_s(const JobProfile& job, const JobDecision* previous, double phase_s, double period_s,
                         double now_s) {
    if (period_s <= 0) return 0;
    const double from = next_release_s(job, previous, now_s);
    if (from < 0) return period_s / 2;
    const double wait = wrap(phase_s - from, period_s);
    // Equal within rounding: the same slot.
    return wait > period_s - 1e-9 ? 0 : wait;
}

double time_left_s(const JobProfile& job, double now_s) {
    if (job.end_s <= 0) return 0;
    return std::max(job.end_s - now_s, running_period_s(job));
}

double wait_charge(const JobProfile& job, double wait_s, double now_s) {
    const double left = time_left_s(job, now_s);
    return left > 0 ? wait_s / left : 0;
}

double first_wait_charge(const JobProfile& job, const std::map<JobId, JobDecision>& previous, double phase_s,
                         double period_s, double now_s) {
    auto p = previous.find(job.id);
    const double wait = first_slot_wait_s(job, p != previous.end() ? &p->second : nullptr, phase_s, period_s, now_s);
    return wait_charge(job, wait, now_s);
}

}  // namespace harmonics
