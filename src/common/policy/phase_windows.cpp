#include "policy/phase_windows.h"

#include <map>

#include "policy/slot_grid.h"

namespace harmonics::phase {

Rhythm rhythm_of(const Topology& topo, const JobProfile& job, const std::unordered_map<LinkId, SwitchId>& leaf_of) {
    Rhythm r;
    r.T = iteration_period_s(job);
    std::map<LinkId, double> peak;
    for (const CommWindow& w : comm_windows(job)) {
        const CommPhase& ph = *w.phase;
        r.window = std::max(r.window, w.end_s);
        if (ph.alone_s <= 0) continue;
        for (const LinkUse& u : ph.links) {
            if (!leaf_of.count(u.link)) continue;
            const double f = use_fraction(ph, u, topo.link(u.link).capacity_Bps);
            peak[u.link] = std::max(peak[u.link], f);
        }
    }
    r.links.assign(peak.begin(), peak.end());
    return r;
}

double WindowLoads::unavoidable() const {
    double s = 0;
    for (size_t x = 0; x < bg_.size(); ++x) {
        double sum = k_ * bg_[x];
        for (int g = 0; g < k_; ++g) sum += load_[x * k_ + g];
        s += std::max(0.0, sum - k_ - kEps);
    }
    return s;
}

std::vector<double> WindowLoads::loads_with_background() const {
    std::vector<double> v = load_;
    for (size_t x = 0; x < bg_.size(); ++x)
        for (int g = 0; g < k_; ++g) v[x * k_ + g] += bg_[x];
    return v;
}

double WindowLoads::total() const {
    double s = 0;
    for (size_t x = 0; x < bg_.size(); ++x)
        for (int g = 0; g < k_; ++g) s += overload(load_[x * k_ + g] + bg_[x]);
    return s;
}

}  // namespace harmonics::phase
