// Max-min fair rates by progressive filling over shared links; optionally by
// strict priority classes (class 0 served first, max-min within a class).
// A flow is one communication phase moving in lock-step: on link l it
// consumes multiplicity·rate.
#pragma once

#include <vector>

#include "model/job.h"

namespace harmonics {

struct FlowDemand {
    const std::vector<LinkUse>* links;  // not owned
    int priority = 0;                    // used when strict_priority
};

// capacity[l] in bytes/s for every link id; returns one rate per flow (bytes/s
// per edge of the phase). A flow crossing no link gets +infinity. Throws
// std::invalid_argument for a link id outside `capacity`. Safe to call from
// several threads (each keeps its own workspace); cost and method in
// maxmin.cpp and doc/models.md.
std::vector<double> maxmin_rates(const std::vector<double>& capacity, const std::vector<FlowDemand>& flows,
                                 bool strict_priority);

}  // namespace harmonics
