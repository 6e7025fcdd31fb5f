// The incremental state every slot-grid search works on: link loads over one
// hyperperiod and the weighted excess they carry, updated by placing or
// removing one job at a time (only the slots where it communicates). Also the
// bursts of a job's period. Internal to the policy library.
#ifndef HARMONICS_POLICY_SLOT_STATE_H
#define HARMONICS_POLICY_SLOT_STATE_H

#include "policy/slot_grid.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace harmonics {

struct SparseDemand {
    int link;
    std::vector<std::pair<int, double>> nz;  // (slot in period, capacity fraction)
};

// slot_excess of one link with suffix sums over its background mix, so a
// slot costs a binary search instead of a walk over the mix.
class ExcessFn {
public:
    explicit ExcessFn(const SlotLink& l) : weight_(l.weight) {
        for (const auto& [y, p] : l.background_mix) y_.push_back(y);
        psuf_.assign(y_.size() + 1, 0);
        ysuf_.assign(y_.size() + 1, 0);
        for (size_t k = y_.size(); k-- > 0;) {
            psuf_[k] = psuf_[k + 1] + l.background_mix[k].second;
            ysuf_[k] = ysuf_[k + 1] + l.background_mix[k].second * l.background_mix[k].first;
        }
    }
    // Weighted excess of a slot whose jobs' load (background included) is x.
    double operator()(double x) const {
        if (y_.empty()) return weight_ * std::max(0.0, x - 1.0);
        // Mix values with x + y > 1 contribute p·(x + y - 1).
        size_t k = std::upper_bound(y_.begin(), y_.end(), 1.0 - x) - y_.begin();
        return weight_ * std::max(0.0, (x - 1.0) * psuf_[k] + ysuf_[k]);
    }

private:
    double weight_;
    std::vector<double> y_, psuf_, ysuf_;
};

// Link loads over one hyperperiod and the weighted excess they carry.
class LoadState {
public:
    explicit LoadState(const SlotProblem& p) : p_(p), H_(p.hyperperiod_slots) {
        load_.resize(p.links.size());
        for (size_t k = 0; k < p.links.size(); ++k) load_[k].assign(H_, p.links[k].background);
        for (const SlotLink& l : p.links) fn_.emplace_back(l);
        for (size_t k = 0; k < p.links.size(); ++k)
            for (double x : load_[k]) excess_ += fn_[k](x);
        jobs_.resize(p.jobs.size());
        weight_.resize(p.jobs.size(), 0);
        for (size_t i = 0; i < p.jobs.size(); ++i) {
            for (const SlotDemand& d : p.jobs[i].demand) {
                SparseDemand s{d.link, {}};
                for (int t = 0; t < static_cast<int>(d.pattern.size()); ++t)
                    if (d.pattern[t] > 0) {
                        s.nz.push_back({t, d.pattern[t]});
                        weight_[i] += d.pattern[t] / d.pattern.size();
                    }
                if (!s.nz.empty()) jobs_[i].push_back(std::move(s));
            }
        }
    }

    // Weighted excess job i would add at shift s (> 0 only where it overloads).
    double delta(size_t i, int s) const {
        double d = 0;
        for_each_slot(i, s, [&](int link, int tau, double v) {
            double before = load_[link][tau];
            d += fn_[link](before + v) - fn_[link](before);
        });
        return d;
    }
    // Places (+1) or removes (-1) job i at shift s; returns the change in excess.
    double apply(size_t i, int s, int sign) {
        double d = 0;
        for_each_slot(i, s, [&](int link, int tau, double v) {
            double& L = load_[link][tau];
            double before = L;
            L += sign * v;
            d += fn_[link](L) - fn_[link](before);
        });
        excess_ += d;
        return d;
    }
    double excess() const { return excess_; }
    // Counts every slot load delta() and apply() touch into *work (a
    // search's budget in work units, SearchStats::work).
    void meter(std::int64_t* work) { work_ = work; }
    // Load of a link in slot tau of the hyperperiod (background included).
    double load(int link, int tau) const { return load_[link][tau]; }
    double job_weight(size_t i) const { return weight_[i]; }

private:
    // Calls f(link, slot of the hyperperiod, demand) for every slot job i
    // communicates in when its first collective starts at slot s.
    template <typename F>
    void for_each_slot(size_t i, int s, F&& f) const {
        const int P = p_.jobs[i].period_slots;
        std::int64_t n = 0;
        for (const SparseDemand& sd : jobs_[i])
            for (const auto& [t, v] : sd.nz) {
                int base = t + s;
                if (base >= P) base -= P;
                for (int tau = base; tau < H_; tau += P, ++n) f(sd.link, tau, v);
            }
        if (work_) *work_ += n;
    }

    const SlotProblem& p_;
    int H_;
    std::vector<std::vector<double>> load_;
    std::vector<ExcessFn> fn_;
    std::vector<std::vector<SparseDemand>> jobs_;
    std::vector<double> weight_;
    double excess_ = 0;
    std::int64_t* work_ = nullptr;
};

// The stretch part of a plan's cost: sum over jobs of P_j / T_j - 1.
double stretch_cost(const SlotProblem& p);

// Where each burst of a job starts and ends within its period (shift 0).
struct Bursts {
    std::vector<int> starts, ends;
};

Bursts bursts_of(const SlotJob& j);

}  // namespace harmonics

#endif
