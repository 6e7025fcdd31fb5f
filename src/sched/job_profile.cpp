#include "job_profile.h"

#include <algorithm>
#include <map>
#include <set>

namespace harmonics::sched {

JobProfile build_profile(const Topology& topo, JobId id, const std::vector<std::string>& nodes,
                         const std::vector<SwitchId>& leaves, const JobSummary& summary) {
    JobProfile p;
    p.id = id;
    std::set<NodeId> seen;
    for (const std::string& n : nodes) {
        NodeId nid = topo.find_node(n);
        if (nid >= 0 && seen.insert(nid).second) p.nodes.push_back(nid);
    }
    std::stable_sort(p.nodes.begin(), p.nodes.end(),
                     [&](NodeId a, NodeId b) { return topo.node(a).leaf < topo.node(b).leaf; });
    std::set<SwitchId> lv(leaves.begin(), leaves.end());
    for (NodeId n : p.nodes) lv.insert(topo.node(n).leaf);
    p.leaves.assign(lv.begin(), lv.end());

    // Ring edges between consecutive nodes; each link crossed counts once per edge.
    std::map<LinkId, double> mult;
    if (p.nodes.size() > 1)
        for (std::size_t i = 0; i < p.nodes.size(); ++i)
            for (LinkId l : topo.path(p.nodes[i], p.nodes[(i + 1) % p.nodes.size()])) mult[l] += 1;
    // Leaves whose nodes this daemon does not know still see the ring cross
    // their uplink and downlink once each way.
    if (p.leaves.size() > 1)
        for (SwitchId s : p.leaves) {
            const Switch& sw = topo.sw(s);
            if (sw.up >= 0 && !mult.count(sw.up)) mult[sw.up] = 1;
            if (sw.down >= 0 && !mult.count(sw.down)) mult[sw.down] = 1;
        }
    std::vector<LinkUse> uses;
    for (auto [l, m] : mult) uses.push_back({l, m});

    // The isolated duration of a phase: its bytes at the ring's bottleneck
    // link. A measured duration is stretched by whatever shared the link.
    double slowest = 0;  // seconds per byte on the bottleneck
    for (const LinkUse& u : uses) slowest = std::max(slowest, u.multiplicity / topo.link(u.link).capacity_Bps);
    double comm = 0, comm_alone = 0;
    for (const PhaseSample& s : summary.phases) {
        CommPhase ph;
        ph.start_offset_s = s.start_offset_s;
        ph.bytes_per_edge = s.bytes;
        ph.alone_s = s.bytes > 0 && slowest > 0 ? std::min(s.duration_s, s.bytes * slowest) : s.duration_s;
        comm_alone += ph.alone_s;
        ph.links = uses;
        comm += s.duration_s;
        p.phases.push_back(std::move(ph));
    }
    // A gated job's period includes the gate's holds; its own rhythm (what
    // the next schedule must fit) does not. Left in, the estimate would
    // settle on whatever period it was last given.
    p.compute_s = std::max(0.0, natural_period_s(summary) - comm);
    p.measured_period_s = summary.period_s;
    p.isolated_period_s = p.compute_s + comm_alone;
    if (summary.last_collective_s > 0) p.last_collective_s = summary.last_collective_s;
    return p;
}

double natural_period_s(const JobSummary& summary) {
    double held = 0;
    for (const PhaseSample& s : summary.phases) held += s.held_s;
    return std::max(0.0, summary.period_s - held);
}

double uplink_load(const Topology& topo, const JobProfile& job, SwitchId leaf) {
    LinkId up = topo.sw(leaf).up;
    if (up < 0 || job.measured_period_s <= 0) return 0;
    double cap = topo.link(up).capacity_Bps;
    double bytes = 0;
    for (const CommPhase& ph : job.phases)
        for (const LinkUse& u : ph.links)
            if (u.link == up) bytes += ph.bytes_per_edge * u.multiplicity;
    return cap > 0 ? bytes / cap / job.measured_period_s : 0;
}

}  // namespace harmonics::sched
