// The flows in flight and their rates. A flow is one communication phase of
// one job: all its ring edges move in lock-step at one rate, loading each link
// it crosses by multiplicity·rate. Rates are max-min fair (or by strict
// priority class) and are recomputed only for the flows that share links,
// directly or through other flows, with a flow that started or ended: the
// connected component of the flow–link graph touched by the change. Storage
// (flow slots, per-link flow lists, BFS and solver scratch) is reused, so a
// steady-state run does not allocate per event.
#pragma once

#include <cstdint>
#include <vector>

#include "model/job.h"
#include "model/maxmin.h"
#include "topology/topology.h"

namespace harmonics {
namespace sim {

struct Flow {
    int job = -1;
    const std::vector<LinkUse>* links = nullptr;  // owned by the job's profile
    double remaining = 0;      // bytes per edge still to deliver
    double rate = 0;           // bytes/s per edge
    double last_t = 0;         // time `remaining` was last brought up to date
    int priority = 0;
    std::uint32_t version = 0; // bumped on every rate change
    bool active = false;
};

class FlowTable {
public:
    FlowTable(const Topology& topo, bool strict_priority);

    // A new flow of `bytes` per edge; its rate is 0 until recompute().
    int add(int job, const std::vector<LinkUse>* links, double bytes, int priority, double now);
    // The flow delivered its last byte at `now`: account it and free the slot.
    void finish(int f, double now);
    // Change a flow's priority class (takes effect at the next recompute()).
    void set_priority(int f, int priority);

    bool dirty() const { return !seeds_.empty(); }
    // New rates for every flow in the components touched since the last call;
    // returns those flows (valid until the next call).
    const std::vector<int>& recompute(double now);

    const Flow& flow(int f) const { return flows_[f]; }
    std::size_t active_count() const { return active_; }
    // Bytes carried by each link so far (multiplicity·bytes per edge), exact at
    // the last rate change of each flow.
    const std::vector<double>& link_bytes() const { return link_bytes_; }
    // Settle every active flow up to `now` (for link_bytes() at the end of a run).
    void settle_all(double now);

    // Statistics for the benchmark: solver calls, the flows they covered, and
    // changes that touched a lone flow (no solver call).
    long solver_calls() const { return solver_calls_; }
    long solver_flows() const { return solver_flows_; }
    long single_flow_solves() const { return single_flow_solves_; }

private:
    void settle(Flow& fl, double now);
    void mark_seeds(const Flow& fl);

    std::vector<double> capacity_;
    bool strict_;
    std::vector<Flow> flows_;
    std::vector<int> free_;
    std::size_t active_ = 0;
    std::vector<std::vector<int>> link_flows_;  // active flows per link
    std::vector<double> link_bytes_;

    // Scratch, reused between calls.
    std::vector<int> seeds_;
    std::vector<std::uint32_t> link_mark_, flow_mark_;
    std::uint32_t stamp_ = 0;
    std::vector<int> comp_links_, comp_flows_;
    std::vector<FlowDemand> demands_;
    long solver_calls_ = 0, solver_flows_ = 0, single_flow_solves_ = 0;
};

}  // namespace sim
}  // namespace harmonics
