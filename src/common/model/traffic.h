// Maps a placed job's collectives onto the links they load (ring or
// hierarchical all-reduce) and derives its per-iteration profile.
#pragma once

#include "model/job.h"
#include "model/model_library.h"
#include "topology/topology.h"

namespace harmonics {

// Bytes each rank sends in a ring all-reduce of `bytes` over n ranks: 2(n-1)/n·S.
double ring_allreduce_bytes_per_rank(double bytes, int n);

// Placement must be non-empty (node ids of `topo`). The ring is ordered rack by
// rack, so it crosses each involved leaf's uplink and downlink once each way.
// Only inter-node traffic is modelled: a job on one node has no phases; a
// hierarchical job has up to three (phases with no network edge are left
// out). Throws std::invalid_argument naming the job for a bad placement.
JobProfile make_profile(const Topology& topo, const JobSpec& spec, const ModelProfile& model,
                        const std::vector<NodeId>& placement);

}  // namespace harmonics
