// Phase families' building blocks (policy/phase_groups.h): a job's rhythm
// as the family plan sees it, and one family's loads per (leaf link, window).
// Internal to the phase-group plan: no I/O, nothing else includes it.
#ifndef HARMONICS_POLICY_PHASE_WINDOWS_H
#define HARMONICS_POLICY_PHASE_WINDOWS_H

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics::phase {

inline constexpr double kEps = 1e-9;

// What the plan needs of a job: its rhythm and, per leaf link it crosses,
// the capacity fraction it takes while communicating.
struct Rhythm {
    double T = 0;        // isolated iteration time
    double window = 0;   // first collective's start to the last one's end
    std::vector<std::pair<LinkId, double>> links;   // link, peak fraction
};

Rhythm rhythm_of(const Topology& topo, const JobProfile& job, const std::unordered_map<LinkId, SwitchId>& leaf_of);

inline double overload(double load) { return std::max(0.0, load - 1 - kEps); }

// One family's window assignment: loads per (link, window), on top of the
// peak load of the jobs outside the family (Planner::background).
class WindowLoads {
public:
    WindowLoads(int groups, const std::map<LinkId, double>& background) : k_(groups) {
        for (const auto& [l, bg] : background) {
            index_[l] = static_cast<int>(bg_.size());
            bg_.push_back(bg);
        }
        load_.assign(bg_.size() * k_, 0.0);
    }
    int groups() const { return k_; }
    int index(LinkId l) const { return index_.at(l); }
    // Added overload if a job with these (link index, peak) pairs joined window g.
    double added(const std::vector<std::pair<int, double>>& uses, int g) const {
        double d = 0;
        for (const auto& [x, f] : uses) {
            const double before = load_[x * k_ + g] + bg_[x];
            d += overload(before + f) - overload(before);
        }
        return d;
    }
    double total_load(const std::vector<std::pair<int, double>>& uses, int g) const {
        double s = 0;
        for (const auto& [x, f] : uses) s += load_[x * k_ + g];
        return s;
    }
    void put(const std::vector<std::pair<int, double>>& uses, int g, double sign) {
        for (const auto& [x, f] : uses) load_[x * k_ + g] += sign * f;
    }
    // A job outside every window: it loads all of them.
    void add_background(const std::vector<std::pair<int, double>>& uses) {
        for (const auto& [x, f] : uses) bg_[x] += f;
    }
    // A job leaving its window to run free.
    void set_free(const std::vector<std::pair<int, double>>& uses, int g) {
        put(uses, g, -1);
        add_background(uses);
    }
    bool overloads(const std::vector<std::pair<int, double>>& uses, int g) const {
        for (const auto& [x, f] : uses)
            if (overload(load_[x * k_ + g] + bg_[x]) > 0) return true;
        return false;
    }
    // The overload no assignment avoids: a link's windows carry its members'
    // demand and K times its background whatever the windows, and at most
    // K of that without overload.
    double unavoidable() const;
    std::vector<double> loads_with_background() const;
    double total() const;

private:
    int k_;
    std::unordered_map<LinkId, int> index_;
    std::vector<double> bg_;
    std::vector<double> load_;
};

}  // namespace harmonics::phase

#endif
