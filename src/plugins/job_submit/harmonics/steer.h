// The steering decision of job_submit/harmonics, apart from Slurm's types so it
// can be tested alone: from what the user asked and coordd's leaf summary,
// decide which placement hints (if any) to add to a multi-node job.
//
// - A job that fits in one leaf gets req_switch=1 with a bounded wait
//   (SwitchWait): its collectives then cross no uplink at all.
// - Leaves whose uplink coordd does not accept (accept=0 in the summary) are
//   avoided when the others can hold the job: a feature OR-list of the
//   accepted leaves ("rack1|rack3"), or, when a leaf has no feature, the
//   rejected leaves' nodes as excluded nodes.
// - When the summary lists Slurm's partitions, only the leaves' nodes in the
//   job's partition count (Slurm rejects a job whose constraint its partition
//   cannot meet); a partition the summary does not list gets no leaf
//   constraint at all. Without partition records every partition is taken
//   to span all leaves.
// - Nothing is changed for one-node jobs, for jobs whose user chose placement
//   (--switches, --constraint, --prefer, --nodelist, --exclude), or when the
//   summary is missing, stale or empty (fail open).
#pragma once

#include <cstdint>
#include <string>

#include "state/leaf_summary.h"

namespace harmonics::steer {

// What the user asked, reduced to what steering looks at.
struct JobRequest {
    uint32_t min_nodes = 0;       // 0 when not given
    bool user_switches = false;   // --switches
    bool user_features = false;   // --constraint
    bool user_prefer = false;     // --prefer
    bool user_nodelist = false;   // --nodelist
    bool user_exclude = false;    // --exclude
    std::string partition;        // --partition (comma list); "" = the default one
};

struct Settings {
    bool steering = true;         // Steering
    double switch_wait_s = 120;   // SwitchWait
    double state_max_age_s = 60;  // StateMaxAge
};

struct Decision {
    bool steered = false;
    uint32_t req_switch = 0;      // 0: leave unset
    uint32_t wait4switch_s = 0;
    std::string features;         // "" : leave unset
    std::string exc_nodes;        // "" : leave unset
    std::string tag;              // for AdminComment when steered
    std::string why;              // steered: what was done; untouched: why not
    // Untouched because Harmonics' state is unusable; `fail_kind` names the
    // kind of outage (stable while it lasts, unlike `why`, which has ages).
    bool fail_open = false;
    std::string fail_kind;
};

// `summary` may be null (no usable state file); `now` is unix seconds.
Decision decide(const JobRequest& job, const state::Summary* summary, const Settings& settings, double now);

}  // namespace harmonics::steer
