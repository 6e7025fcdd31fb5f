// Turns what a daemon knows about a job (its nodes, the leaves it spans, the
// hooks' aggregated measurements) into the model's JobProfile, the input of
// the policy code. Shared by harmonics-schedd and harmonics-coordd.
#pragma once

#include <string>
#include <vector>

#include "job_aggregate.h"
#include "model/job.h"
#include "topology/topology.h"

namespace harmonics::sched {

// `nodes` are host names (unknown names are skipped); `leaves` the leaves the
// job spans when known beyond its nodes (a schedd sees only its own nodes).
// The ring is ordered leaf by leaf, so a job spanning several leaves loads
// each one's uplink and downlink once per phase.
JobProfile build_profile(const Topology& topo, JobId id, const std::vector<std::string>& nodes,
                         const std::vector<SwitchId>& leaves, const JobSummary& summary);

// The job's own iteration period: the measured one less the time the gate
// held its collectives (what the simulator measures as a job's period).
double natural_period_s(const JobSummary& summary);

// Mean share of `leaf`'s uplink capacity the job uses over its period.
double uplink_load(const Topology& topo, const JobProfile& job, SwitchId leaf);

}  // namespace harmonics::sched
