// Component-limited rate recomputation over the shared max-min solver.
#include "sim/flow_table.h"

#include <algorithm>
#include <limits>

namespace harmonics {
namespace sim {

FlowTable::FlowTable(const Topology& topo, bool strict_priority)
    : strict_(strict_priority), link_flows_(topo.links().size()), link_bytes_(topo.links().size(), 0.0),
      link_mark_(topo.links().size(), 0) {
    capacity_.reserve(topo.links().size());
    for (const Link& l : topo.links()) capacity_.push_back(l.capacity_Bps);
}

int FlowTable::add(int job, const std::vector<LinkUse>* links, double bytes, int priority, double now) {
    int f;
    if (!free_.empty()) {
        f = free_.back();
        free_.pop_back();
    } else {
        f = static_cast<int>(flows_.size());
        flows_.emplace_back();
        flow_mark_.push_back(0);
    }
    Flow& fl = flows_[f];
    fl.job = job;
    fl.links = links;
    fl.remaining = bytes;
    fl.rate = 0;
    fl.last_t = now;
    fl.priority = priority;
    fl.version++;
    fl.active = true;
    ++active_;
    for (const LinkUse& u : *links) link_flows_[u.link].push_back(f);
    mark_seeds(fl);
    return f;
}

void FlowTable::settle(Flow& fl, double now) {
    double delivered = std::min(fl.remaining, fl.rate * (now - fl.last_t));
    if (delivered > 0) {
        fl.remaining -= delivered;
        for (const LinkUse& u : *fl.links) link_bytes_[u.link] += u.multiplicity * delivered;
    }
    fl.last_t = now;
}

void FlowTable::finish(int f, double now) {
    Flow& fl = flows_[f];
    // The completion event fired for this rate, so what is left is delivered
    // now (rounding of rate·dt must not lose or invent bytes).
    for (const LinkUse& u : *fl.links) link_bytes_[u.link] += u.multiplicity * fl.remaining;
    fl.remaining = 0;
    fl.last_t = now;
    for (const LinkUse& u : *fl.links) {
        std::vector<int>& on = link_flows_[u.link];
        auto it = std::find(on.begin(), on.end(), f);
        if (it != on.end()) {
            *it = on.back();
            on.pop_back();
        }
    }
    mark_seeds(fl);
    fl.active = false;
    fl.version++;
    --active_;
    free_.push_back(f);
}

void FlowTable::set_priority(int f, int priority) {
    Flow& fl = flows_[f];
    if (fl.priority == priority) return;
    fl.priority = priority;
    mark_seeds(fl);
}

void FlowTable::mark_seeds(const Flow& fl) {
    for (const LinkUse& u : *fl.links) seeds_.push_back(u.link);
}

const std::vector<int>& FlowTable::recompute(double now) {
    comp_links_.clear();
    comp_flows_.clear();
    if (++stamp_ == 0) {  // wrapped: forget every old mark
        std::fill(link_mark_.begin(), link_mark_.end(), 0);
        std::fill(flow_mark_.begin(), flow_mark_.end(), 0);
        stamp_ = 1;
    }
    for (int l : seeds_) {
        if (link_mark_[l] == stamp_) continue;
        link_mark_[l] = stamp_;
        comp_links_.push_back(l);
    }
    seeds_.clear();
    // Breadth-first over links and the flows on them.
    for (std::size_t i = 0; i < comp_links_.size(); ++i) {
        for (int f : link_flows_[comp_links_[i]]) {
            if (flow_mark_[f] == stamp_) continue;
            flow_mark_[f] = stamp_;
            comp_flows_.push_back(f);
            for (const LinkUse& u : *flows_[f].links) {
                if (link_mark_[u.link] == stamp_) continue;
                link_mark_[u.link] = stamp_;
                comp_links_.push_back(u.link);
            }
        }
    }
    if (comp_flows_.empty()) return comp_flows_;
    // Same order on every run: flows by slot (the BFS order depends only on
    // the event order, which is deterministic, but sorting makes the solver's
    // input independent of how the change was discovered).
    std::sort(comp_flows_.begin(), comp_flows_.end());

    // Most changes touch a flow that shares no link with another: alone, it
    // runs at its tightest link's capacity / multiplicity, which is what the
    // solver would return, without its set-up cost.
    if (comp_flows_.size() == 1) {
        Flow& fl = flows_[comp_flows_[0]];
        double rate = std::numeric_limits<double>::infinity();
        for (const LinkUse& u : *fl.links)
            if (u.multiplicity > 0) rate = std::min(rate, std::max(0.0, capacity_[u.link]) / u.multiplicity);
        settle(fl, now);
        fl.rate = rate;
        fl.version++;
        ++single_flow_solves_;
        return comp_flows_;
    }
    // The solver's cost grows with the flows and links it is given, not with
    // the fabric, so it gets the full capacity table and only this component.
    demands_.clear();
    for (int f : comp_flows_) demands_.push_back(FlowDemand{flows_[f].links, flows_[f].priority});
    std::vector<double> rates = maxmin_rates(capacity_, demands_, strict_);
    ++solver_calls_;
    solver_flows_ += static_cast<long>(comp_flows_.size());
    for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
        Flow& fl = flows_[comp_flows_[i]];
        settle(fl, now);
        fl.rate = rates[i];
        fl.version++;
    }
    return comp_flows_;
}

void FlowTable::settle_all(double now) {
    for (Flow& fl : flows_)
        if (fl.active) settle(fl, now);
}

}  // namespace sim
}  // namespace harmonics
