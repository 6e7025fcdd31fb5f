// Small hand-built jobs and fabrics for the harmonics tests: a job computes,
// then runs one collective that loads the given links at a chosen fraction of
// their capacity.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "model/job.h"
#include "model/model_library.h"
#include "model/traffic.h"
#include "policy/policy.h"
#include "topology/topology.h"

namespace harmonics::testing {

// Two racks under one spine; NICs 12.5 GB/s, uplinks oversubscribed 4:1.
inline Topology two_racks(int racks = 2, int nodes = 4) {
    return Topology::make_two_level(racks, nodes, 12.5e9, 4.0);
}

// Gated on slots at origin + shift + k · period.
inline JobDecision gated(double origin, double shift, double period) {
    JobDecision d;
    d.gated = true;
    d.origin_s = origin;
    d.shift_s = shift;
    d.period_s = period;
    return d;
}

// Period T, one collective of `comm_s` starting after compute, loading each
// link in `links` at `fraction` of the first link's capacity.
// Options for tests that assert what a search finds: a budget no busy host
// runs out of (the default 1 ms can pass with the test descheduled under
// ctest -j2; both LocalScheduler tests that failed that way here).
inline PolicyOptions search_options() {
    PolicyOptions o;
    o.local_budget_s = 1.0;
    return o;
}

inline JobProfile periodic_job(const Topology& topo, JobId id, double T, double comm_s,
                               const std::vector<LinkId>& links, double fraction) {
    JobProfile j;
    j.id = id;
    j.compute_s = T - comm_s;
    j.isolated_period_s = T;
    CommPhase ph;
    ph.start_offset_s = j.compute_s;
    ph.alone_s = comm_s;
    double rate = fraction * topo.link(links.front()).capacity_Bps;
    ph.bytes_per_edge = rate * comm_s;
    for (LinkId l : links) ph.links.push_back({l, 1.0});
    j.phases.push_back(ph);
    return j;
}

// The cluster filled with bert-large rings of 2-4 nodes on shuffled nodes:
// jobs scattered over the leaves, every uplink shared.
inline std::vector<JobProfile> scattered_bert_large(const Topology& topo, std::mt19937& rng) {
    std::vector<JobProfile> jobs;
    std::vector<NodeId> all;
    for (NodeId i = 0; i < static_cast<NodeId>(topo.nodes().size()); ++i) all.push_back(i);
    std::shuffle(all.begin(), all.end(), rng);
    size_t used = 0;
    for (int k = 0; used + 4 <= all.size(); ++k) {
        JobSpec spec;
        spec.id = k + 1;
        spec.model = "bert-large";
        spec.nodes = 2 + static_cast<int>(rng() % 3);
        std::vector<NodeId> placement(all.begin() + used, all.begin() + used + spec.nodes);
        used += spec.nodes;
        jobs.push_back(make_profile(topo, spec, *find_model(spec.model), placement));
    }
    return jobs;
}

}  // namespace harmonics::testing
