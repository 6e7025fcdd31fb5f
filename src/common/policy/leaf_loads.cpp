#include "policy/leaf_loads.h"

#include <map>

#include "policy/harmonics_local.h"
#include "policy/slot_grid.h"

namespace harmonics {

std::unordered_map<LinkId, SwitchId> leaf_of_links(const Topology& topo) {
    std::unordered_map<LinkId, SwitchId> m;
    for (SwitchId s : topo.leaves())
        for (LinkId l : leaf_links(topo, s)) m[l] = s;
    return m;
}

std::vector<LeafLoad> leaf_loads(const Topology& topo, const std::vector<JobProfile>& jobs,
                                 const std::unordered_map<LinkId, SwitchId>& leaf_of) {
    std::vector<LeafLoad> out(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
        const JobProfile& j = jobs[i];
        const double T = iteration_period_s(j);
        std::map<SwitchId, double> acc;
        for (const CommWindow& w : comm_windows(j)) {
            const CommPhase& ph = *w.phase;
            if (ph.alone_s <= 0) continue;
            for (const LinkUse& u : ph.links) {
                auto it = leaf_of.find(u.link);
                if (it == leaf_of.end()) continue;
                const double frac = use_fraction(ph, u, topo.link(u.link).capacity_Bps);
                acc[it->second] += T > 0 ? frac * (w.end_s - w.begin_s) / T : 0;
            }
        }
        out[i].per_leaf.assign(acc.begin(), acc.end());
    }
    return out;
}

}  // namespace harmonics
