// The figures a run is judged by, and the contention-free lower bound of a
// scenario. Slowdown is a job's mean iteration time over its isolated
// iteration time T_j; mean and p99 are taken over jobs.
#pragma once

#include <string>
#include <vector>

#include "sim/engine.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

struct Summary {
    double mean_slowdown = 0;
    double p99_slowdown = 0;
    double mean_comm_ms = 0;       // communication time per iteration, mean over jobs
    double mean_jct_s = 0;
    double sched_ms_per_epoch = 0;
    int jobs = 0;                  // jobs that completed at least one iteration
};

// p-th percentile (0..100) by linear interpolation between order statistics.
double percentile(std::vector<double> values, double p);

Summary summarize(const RunResult& run);

// The lower bound, per job and summarised. A job never beats T_j; a link whose
// average offered load ρ (Σ over the jobs crossing it while they overlap in
// time of bytes per iteration / T_k, weighted by the share of j's isolated
// lifetime they overlap, over capacity) exceeds 1 must stretch the jobs
// crossing it by ρ on average, so each job's bound is T_j·max(1, ρ of its
// most loaded link). Communication is bounded by its isolated time, JCT by
// iterations × bound, and the bound spends no time scheduling.
// With end_s > 0 (a run cut at --duration) the summary, like the runs',
// covers only the jobs that arrived before end_s.
struct LowerBound {
    std::vector<double> slowdown;  // per job, in job order
    Summary summary;
};
LowerBound lower_bound(const Topology& topo, const std::vector<SimJob>& jobs, double end_s = 0);

}  // namespace sim
}  // namespace harmonics
