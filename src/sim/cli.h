// harmonics-sim's command line: options, building the scenario, running each
// policy and writing the results. main() only calls run_cli().
#pragma once

#include <string>
#include <vector>

#include "model/job.h"

namespace harmonics {
namespace sim {

struct CliOptions {
    std::string topology, config, workload;
    std::string scenario;              // "" = the default, unless generating
    std::vector<std::string> policies; // empty = every registered policy
    double duration_s = -1;            // <0: the scenario's
    double epoch_s = -1;               // <0: harmonics.conf's or the scenario's
    double time_limit_s = -1;          // <0: harmonics.conf's SolverTimeLimit, 1 s without one
    double gate_cap_s = -1;            // <0: harmonics.conf's GateCap
    // Generator (any of these switches it on).
    bool generate = false;
    int racks = 16, nodes_per_rack = 8, jobs = 50;
    double arrival_rate = 0.1, oversubscription = 3;
    double utilisation = 0;            // >0: a busy, fragmented cluster (generator.h)
    double min_runtime_s = -1, max_runtime_s = -1;  // <0: the generator's
    std::string placement = "rack-aware";  // generator's node choice (placement_plan.h)
    std::vector<std::string> models;       // generator's model mix; empty: the whole library
    double compute_jitter = 0;         // measurement noise: ±share of each iteration's compute
    double measuring_share = 0;        // share of the jobs whose hooks only measure (Gate=no)
    std::vector<JobId> measuring_jobs; // and these, by id
    bool random_phases = false;        // jobs starting at 0 start within their first period
    double pace_spread = 0;            // each job at its own pace, 1 +- up to this share
    long learn_iterations = 0;         // iterations a job runs free before the policies know it
    double time_limit_factor = 2.0;    // each job's time limit, x its isolated runtime (0: none)
    unsigned seed = 1;
    std::string json, csv, out;
    std::string decisions;             // every change of a job's gate schedule, CSV
    bool quiet = false;
    bool list = false;
    bool help = false;
};

// Throws std::invalid_argument with a message for the user.
CliOptions parse_cli(int argc, char** argv);
void print_usage();
int run_cli(int argc, char** argv);

}  // namespace sim
}  // namespace harmonics
