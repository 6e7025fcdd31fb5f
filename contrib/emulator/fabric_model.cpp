#include "fabric_model.h"

#include <algorithm>
#include <limits>

#include "model/maxmin.h"

namespace harmonics::emu {

namespace {
// Below this many bytes a phase counts as delivered: guards against a
// completion that floating-point rounding would push past its own event.
constexpr double kDoneBytes = 1e-3;
}  // namespace

FabricModel::FabricModel(const Topology& topo) {
    for (const Link& l : topo.links()) capacity_.push_back(l.capacity_Bps);
}

void FabricModel::start(JobId job, std::uint64_t seq, const CommPhase& phase, double now_s) {
    std::vector<Completion> due = advance(std::max(now_s, now_s_));
    finished_.insert(finished_.end(), due.begin(), due.end());
    flows_.push_back(Flow{job, seq, phase.links, phase.bytes_per_edge, 0, now_s_});
    recompute_rates();
}

void FabricModel::recompute_rates() {
    std::vector<FlowDemand> demand;
    demand.reserve(flows_.size());
    for (const Flow& f : flows_) demand.push_back(FlowDemand{&f.links, 0});
    std::vector<double> rate = maxmin_rates(capacity_, demand, false);
    for (std::size_t i = 0; i < flows_.size(); ++i) flows_[i].rate = rate[i];
}

void FabricModel::progress_to(double t) {
    double dt = t - now_s_;
    if (dt <= 0) return;
    for (Flow& f : flows_) f.remaining -= f.rate * dt;
    now_s_ = t;
}

double FabricModel::next_completion_s() const {
    if (!finished_.empty()) return now_s_;
    double best = std::numeric_limits<double>::infinity();
    for (const Flow& f : flows_) {
        if (f.remaining <= kDoneBytes) return now_s_;
        // A phase with no links (one node) moves at infinite speed.
        if (f.links.empty()) return now_s_;
        if (f.rate > 0) best = std::min(best, now_s_ + f.remaining / f.rate);
    }
    return best;
}

std::vector<Completion> FabricModel::advance(double now_s) {
    std::vector<Completion> done;
    done.swap(finished_);
    for (;;) {
        double next = next_completion_s();
        if (next > now_s) break;
        progress_to(next);
        auto finished = [&](const Flow& f) { return f.links.empty() || f.remaining <= kDoneBytes ||
                                                    (f.rate > 0 && f.remaining / f.rate <= 1e-12); };
        for (const Flow& f : flows_)
            if (finished(f)) done.push_back(Completion{f.job, f.seq, f.start_s, now_s_});
        flows_.erase(std::remove_if(flows_.begin(), flows_.end(), finished), flows_.end());
        recompute_rates();
    }
    progress_to(now_s);
    return done;
}

}  // namespace harmonics::emu
