// The discrete-event engine. Each job repeats iterations: a compute phase and
// its communication phases (each a flow; phase i starts at the later of its
// offset from the iteration start and the end of phase i-1, so a bucketed
// all-reduce may overlap compute). The next iteration starts when compute and
// every phase are done. A policy is asked for decisions on every arrival,
// departure and epoch; a gated job's first phase of an iteration waits for the
// next slot origin + shift + k·period at or after the time it is ready.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/job.h"
#include "policy/policy.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

// A placed job, ready to run.
struct SimJob {
    JobId id = 0;
    std::string model;
    double arrival_s = 0;
    long iterations = 1;
    JobProfile profile;  // nodes, phases and the links they load
};

// The simulator counts harmonics' per-leaf search budget in search work,
// not wall time (PolicyOptions::search_work_per_s), so its results repeat on
// a busy host. The pace: 1e8 slot loads per second, what one core of the
// 2-core build host did inside those searches (4.8e7 to 3.8e8 over twelve
// workloads, median 1.2e8, pooled over the sweeps 8e7; 2026-12-01,
// doc/harmonics-sim.md "Determinism").
constexpr double kSearchWorkPerS = 1e8;

struct EngineConfig {
    double epoch_s = 1.0;
    double end_s = 0;          // stop here; 0 = when every job has finished
    // Flows crossing switch links within [trace_from_s, trace_to_s) are
    // recorded for the timeline plot (nothing when trace_to_s <= trace_from_s).
    double trace_from_s = 0, trace_to_s = 0;
    // The NCCL hook's gate: off (Gate=no) measures only; a hold never lasts
    // more than gate_cap_s (GateCap), after which the collective goes. 0: no
    // cap beyond the gate's own (the next slot is at most a period away).
    bool gate = true;
    double gate_cap_s = 0;
    // Measurement noise: each iteration's compute time, and with it the
    // moments its collectives become ready, times 1 + u·compute_jitter, u
    // uniform in [-1, 1), drawn from noise_seed, the job and the iteration.
    double compute_jitter = 0;
    unsigned noise_seed = 1;
    // Iterations a job runs, free, before the policy knows it: 0 (every
    // figure's convention) decides a job at its arrival with its profile
    // known; the daemons learn a job from its hooks' rhythm, known once
    // four collectives of one pattern have ended (the NCCL plugin's
    // kMinRepeats + 1), and decide at once: 4, as the engine decides when a
    // job completes its N-th iteration and gates its next.
    long learn_iterations = 0;
    // Each job's time limit, as this many times its isolated runtime
    // (iterations times its isolated period) from its arrival: the end time
    // Slurm gives the job, which the policies see (JobProfile::end_s). 0: no
    // limit known. Users ask for more than their jobs need; 2 is a common
    // margin (doc/harmonics-sim.md).
    double time_limit_factor = 2.0;
    // Keep every change of a job's schedule in RunResult::decisions (a
    // decision equal to the last but for its origin is no change).
    bool record_decisions = false;
    bool progress = false;     // a progress line on stderr
    std::string label;         // shown in the progress line
    // Used instead of a policy when the engine is given none: fixed decisions
    // applied from the start (tests of the gate).
    std::map<JobId, JobDecision> fixed;
    bool fixed_priorities = false;  // serve cfg.fixed's priority classes strictly
};

struct JobResult {
    JobId id = 0;
    std::string model;
    double arrival_s = 0;
    double finish_s = -1;        // -1: still running at the end
    long iterations = 0;         // asked for
    long iterations_done = 0;
    double iteration_time_s = 0; // sum over completed iterations
    double comm_time_s = 0;      // sum of phase durations (flow start to end), completed iterations
    // The same sums over the steady state: the iterations after the first
    // quarter of those asked (the warm-up a measured run leaves out, as the
    // emulated testbed's demo does).
    long steady_iterations_done = 0;
    double steady_iteration_time_s = 0;
    double steady_comm_time_s = 0;
    double isolated_s = 0;       // T_j: one iteration on an idle fabric
    double isolated_comm_s = 0;  // its phases' duration on an idle fabric
    double bytes_per_iteration = 0;  // Σ over phases and links of multiplicity·bytes per edge
    int nodes = 0, leaves = 0;
    double mean_slowdown() const;
    // JCT; for a job still running, elapsed time plus its remaining iterations
    // at its mean iteration time so far.
    double jct_s(double end_s) const;
};

// One flow's stay on a switch link, for the timeline plot.
struct TraceSegment {
    LinkId link;
    JobId job;
    double t0, t1;
    double rate_Bps;  // mean load the flow put on the link (multiplicity·bytes / time)
};

// A job's schedule as a decision round changed it (--decisions): its new
// decision, and the period its hooks measured, net of the gate's holds, when
// it was taken (0 before a whole iteration).
struct DecisionChange {
    double t_s = 0;
    JobId job = 0;
    JobDecision decision;
    double measured_period_s = 0;
};

struct RunResult {
    std::string policy;
    std::vector<JobResult> jobs;
    std::vector<double> sched_time_s;  // per decision round
    double end_s = 0;
    std::vector<double> link_bytes;    // bytes carried by each link
    std::vector<TraceSegment> trace;
    std::vector<DecisionChange> decisions;   // EngineConfig::record_decisions
    long events = 0;
    long solver_calls = 0, solver_flows = 0, lone_flows = 0;
    // The gate's releases of gated jobs' first collectives: how many, how
    // many went late past their slot (the release rule let them go at once),
    // and how many came late (under half a period past the slot) and waited
    // for the next one (a period lost).
    // Late releases run into the bursts planned after theirs: where these are
    // frequent, a plan's collisions spread from job to job (doc/scale.md).
    long gated_releases = 0, late_releases = 0, missed_slots = 0;
    double sched_ms_per_epoch() const;
};

// The duration of a phase alone on an idle fabric and the isolated iteration
// time T_j the engine reproduces for a job alone.
double phase_alone_s(const CommPhase& phase, const Topology& topo);
double isolated_iteration_s(const JobProfile& profile, const Topology& topo);

// Runs the jobs under `policy` (null: cfg.fixed decisions). Deterministic.
RunResult simulate(const Topology& topo, const std::vector<SimJob>& jobs, Policy* policy,
                   const EngineConfig& cfg);

}  // namespace sim
}  // namespace harmonics
