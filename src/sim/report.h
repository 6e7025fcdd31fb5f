// What a comparison run prints and writes: the table on stdout, the JSON
// figures under stable keys, and the per-job CSV.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine.h"
#include "sim/metrics.h"

namespace harmonics {
namespace sim {

struct PolicyRun {
    RunResult run;
    Summary summary;
    std::vector<std::pair<std::string, double>> solver;   // Policy::solver_figures()
};

void print_table(std::FILE* out, const std::string& title, const std::vector<PolicyRun>& runs,
                 const LowerBound& lb);

// {"scenario": ..., "lower_bound": {...}, "policies": {"<name>": {"mean_slowdown": ...}}}.
// Returns false (errno set) when the file cannot be written.
bool write_json(const std::string& path, const std::string& scenario, unsigned seed,
                const std::vector<PolicyRun>& runs, const LowerBound& lb);

// One row per policy and job: policy,job,model,nodes,leaves,arrival_s,finish_s,
// iterations,iterations_done,isolated_ms,mean_iteration_ms,slowdown,
// comm_ms_per_iteration,jct_s,lower_bound_slowdown,steady_iteration_ms,
// steady_comm_ms_per_iteration (the last two after the first quarter).
bool write_jobs_csv(const std::string& path, const std::vector<PolicyRun>& runs, const LowerBound& lb);

// One row per change of a job's gate schedule (RunResult::decisions):
// policy,time_s,job,gated,period_ms,phase_ms,late_ms,window,windows,owner,
// measured_period_ms. phase_ms: where in its period the job's first
// collective may start (origin + shift modulo the period; 0 when free);
// late_ms: how late it may be and still go (-1: the default share);
// window/windows: its phase family's (-1/0 outside one); owner: the leaf
// that decided it ("coordinator" for a family member, "-" for none).
bool write_decisions_csv(const std::string& path, const Topology& topo, const std::vector<PolicyRun>& runs);

}  // namespace sim
}  // namespace harmonics
