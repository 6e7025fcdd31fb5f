#include "job_aggregate.h"

#include <algorithm>
#include <cmath>

namespace harmonics::sched {

namespace {
double median(std::vector<double>& v) {
    std::size_t m = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(m), v.end());
    double hi = v[m];
    if (v.size() % 2) return hi;
    double lo = *std::max_element(v.begin(), v.begin() + std::ptrdiff_t(m));
    return (lo + hi) / 2;
}
}  // namespace

std::optional<std::size_t> median_leaf(const std::vector<LeafSummary>& leaves) {
    auto measured = [&](bool need_phases) {
        std::vector<std::size_t> idx;
        for (std::size_t k = 0; k < leaves.size(); ++k)
            if (leaves[k].period_s > 0 && (!need_phases || (leaves[k].phases && !leaves[k].phases->empty())))
                idx.push_back(k);
        return idx;
    };
    std::vector<std::size_t> idx = measured(true);
    if (idx.empty()) idx = measured(false);
    if (idx.empty()) return std::nullopt;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return leaves[a].period_s < leaves[b].period_s; });
    auto weight = [&](std::size_t k) { return double(std::max(leaves[k].ranks, 1)); };
    double total = 0;
    for (std::size_t k : idx) total += weight(k);
    // The lower weighted median: the first leaf at which half the ranks are reached.
    double seen = 0;
    for (std::size_t k : idx)
        if ((seen += weight(k)) * 2 >= total) return k;
    return idx.back();
}

bool JobAggregate::add(int rank, RankSample s) {
    bool ok = rank >= 0 && std::isfinite(s.period_s) && s.period_s > 0 && s.period_s < 3600 &&
              s.phases.size() <= kMaxPhases && (ranks_.count(rank) || ranks_.size() < max_ranks_);
    for (const PhaseSample& p : s.phases)
        ok = ok && std::isfinite(p.start_offset_s) && std::isfinite(p.duration_s) && std::isfinite(p.bytes) &&
             p.start_offset_s >= 0 && p.duration_s >= 0 && p.bytes >= 0 &&
             std::isfinite(p.held_s) && p.held_s >= 0;
    if (!std::isfinite(s.iteration_start_s) || s.iteration_start_s < 0) s.iteration_start_s = 0;   // not known
    if (!ok) {
        rejected_++;
        return false;
    }
    ranks_[rank] = std::move(s);
    return true;
}

std::optional<JobSummary> JobAggregate::summarize(double now_s, double fresh_s) {
    std::vector<const RankSample*> fresh;
    for (const auto& [r, s] : ranks_)
        if (now_s - s.received_s <= fresh_s) fresh.push_back(&s);
    if (fresh.empty()) return std::nullopt;

    // Ranks may disagree on the number of phases (one saw a partial
    // iteration): use the most common count and the ranks that have it.
    std::map<std::size_t, int> counts;
    for (auto* s : fresh) counts[s->phases.size()]++;
    std::size_t nph = std::max_element(counts.begin(), counts.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; })->first;
    JobSummary out;
    out.ranks = int(fresh.size());
    for (auto* s : fresh) out.last_collective_s = std::max(out.last_collective_s, s->iteration_start_s);
    double busy = 0;   // the summary's phases and holds, per iteration
    for (std::size_t k = 0; k < nph; ++k) {
        PhaseSample p;
        std::vector<double> off, dur, by, held;
        for (auto* s : fresh)
            if (s->phases.size() == nph) {
                off.push_back(s->phases[k].start_offset_s);
                dur.push_back(s->phases[k].duration_s);
                by.push_back(s->phases[k].bytes);
                held.push_back(s->phases[k].held_s);
            }
        p.start_offset_s = median(off);
        p.duration_s = median(dur);
        p.bytes = median(by);
        p.held_s = median(held);
        busy += p.duration_s + p.held_s;
        out.phases.push_back(p);
    }
    // What is smoothed is the compute (period less phases and holds), and the
    // period is rebuilt from it: smoothing the period alone while phases and
    // holds follow at once makes period - holds - phases (the compute schedd
    // plans with) dip or jump whenever a schedule starts or stops holding.
    std::vector<double> v;
    for (auto* s : fresh) {
        if (s->phases.size() != nph) continue;
        double c = s->period_s;
        for (const PhaseSample& ph : s->phases) c -= ph.duration_s + ph.held_s;
        v.push_back(std::max(0.0, c));
    }
    double compute = median(v);
    if (smoothed_compute_ >= 0 && std::fabs(compute - smoothed_compute_) <= 0.2 * smoothed_compute_)
        smoothed_compute_ = 0.7 * smoothed_compute_ + 0.3 * compute;
    else
        smoothed_compute_ = compute;
    out.period_s = smoothed_compute_ + busy;
    return out;
}

}  // namespace harmonics::sched
