// cassini (NSDI'24): per contended link, the rotations of the jobs' circles
// that maximise the compatibility score (policy/cassini_circle.h); then a BFS
// over the bipartite job-link affinity graph turns the per-link rotations
// into one time shift per job. Where the graph has a loop, the link that
// closes it finds some of its jobs already shifted: it keeps them and
// re-optimises only its unshifted jobs against them (doc/baselines.md).
// Centralised: one decision for the whole cluster.
#pragma once

#include <map>
#include <memory>

#include "policy/policy.h"

namespace harmonics {

struct CassiniLinkResult {
    double period_circle_s = 0;   // the unified circle's perimeter
    double best_score = 0;        // the link's own optimum (rotations free)
    double final_score = 0;       // with the shifts the BFS settled on
    bool closes_loop = false;     // reached with more than one job already shifted
};

class CassiniPolicy : public Policy {
public:
    explicit CassiniPolicy(const PolicyOptions& opts) : opts_(opts) {}
    std::string name() const override { return "cassini"; }
    Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                     EpochReason why) override;

    // The last decision's per-link view (contended links only).
    const std::map<LinkId, CassiniLinkResult>& links() const { return links_; }
    int loops() const { return loops_; }

    // Tuning: the unified circle spans at most kMaxRounds of the longest
    // period and is cut into at most kMaxBins arcs; each job tries at most
    // kMaxRotations rotations; a link is searched exhaustively up to
    // kExhaustive combinations.
    static constexpr int kMaxRounds = 8;
    static constexpr int kMaxBins = 1024;
    static constexpr int kMaxRotations = 64;
    static constexpr long kExhaustive = 4096;
    // A periodic epoch keeps the schedule while every job's measured period
    // stays within this fraction of the one it was scheduled for.
    static constexpr double kKeepTolerance = 0.03;

private:
    PolicyOptions opts_;
    std::map<LinkId, CassiniLinkResult> links_;
    int loops_ = 0;
    std::map<JobId, double> last_periods_;   // jobs and periods of the last real decision
    Decisions last_;
};

std::unique_ptr<Policy> make_cassini_policy(const PolicyOptions& opts);

}  // namespace harmonics
