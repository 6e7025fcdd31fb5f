// crux (SIGCOMM'24): no time shifts. Each job's GPU intensity — compute work
// per iteration over its communication time on its bottleneck link — sets
// its priority: the more GPU time a byte of the job's traffic unblocks, the
// earlier the link serves it. Intensities are compressed into the fabric's
// 8 hardware priority classes and links serve classes by strict priority
// (uses_priorities()). Path choice by intensity needs a fabric with several
// paths; in a single-rooted tree every pair of nodes has exactly one, so
// there is nothing to choose (doc/baselines.md).
#pragma once

#include <memory>
#include <vector>

#include "policy/policy.h"

namespace harmonics {

// GPU-seconds of compute per iteration (compute_s times the job's nodes: every
// node carries the same number of GPUs) divided by the job's own
// communication time per iteration on the link where it is longest (bytes
// the job moves over that link / its capacity). +inf when the job loads no link.
double crux_intensity(const Topology& topo, const JobProfile& job);

// Compresses intensities (any order) into at most `classes` priority classes:
// class 0 for the most intense. Equal intensities share a class; otherwise
// the classes are contiguous runs of the sorted log-intensities chosen to
// minimise the summed squared distance to their class mean (1-D optimal
// clustering by dynamic programming), so a class never mixes jobs whose
// intensities differ by more than those of jobs in different classes.
std::vector<int> compress_priorities(const std::vector<double>& intensity, int classes);

class CruxPolicy : public Policy {
public:
    static constexpr int kClasses = 8;
    std::string name() const override { return "crux"; }
    bool uses_priorities() const override { return true; }
    Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                     EpochReason why) override;
};

std::unique_ptr<Policy> make_crux_policy();

}  // namespace harmonics
