// Slowdown of jobs that run free (no gate) on one link: each job alternates
// between time off the link (compute) and work on it, and the jobs on the
// link at once share it. That is a closed queueing network with one customer
// per job: an infinite-server "think" station for the time off and the link
// as a processor-sharing station with per-job rate caps. Under balanced
// fairness (the closest insensitive allocation to max-min sharing) the
// network has a product-form stationary law, so the expected slowdown follows
// exactly from a sum over the sets of jobs on the link at once. The slot
// grid's expected excess only sees one slot at a time; a job delayed on a
// busy link comes back later and meets the others again, which this model
// counts and that one does not.
#pragma once

#include <cstddef>
#include <vector>

namespace harmonics {

struct FreeRunner {
    double work_s = 0;  // per iteration: seconds of the whole link's capacity it needs
    double off_s = 0;   // per iteration: seconds it spends off the link
    double cap = 1;     // the largest fraction of the link it can use (its alone rate)
};

// Jobs up to this many get the exact sum over all 2^n sets on the link; more
// get the same law with every cap replaced by their work-weighted typical cap
// (then a set's weight depends on its size only: O(n^2)).
constexpr size_t kExactRunners = 8;

// Per job, iteration time running free beside the others over its isolated
// iteration time, minus 1 (0: no slowdown). `capacity` is the fraction of the
// link left to them (gated jobs' average load taken off). Zero for every job
// when their caps fit the capacity side by side.
std::vector<double> free_running_slowdowns(const std::vector<FreeRunner>& jobs, double capacity);

}  // namespace harmonics
