// The workload file: one job per line,
//     id, arrival_s, model, nodes, gpus_per_node, iterations [, placement]
// where placement is a Slurm hostlist ("n[1-4]" or "n1,n9": quote it or keep
// its commas inside brackets). Blank lines and lines starting with '#' are
// skipped, as is a header line whose first field is not a number.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

// What is wrong and where: "jobs.csv:4: nodes: 'x' is not a positive integer".
class WorkloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::vector<JobSpec> parse_workload_csv(const std::string& path, const Topology& topo);
std::vector<JobSpec> parse_workload_text(const std::string& text, const std::string& filename,
                                         const Topology& topo);

// The fields of one CSV line: commas split, except inside double quotes or
// square brackets; surrounding blanks are trimmed.
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace sim
}  // namespace harmonics
