// Summaries of runs and the scenario's lower bound.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace harmonics {
namespace sim {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
    std::size_t i = static_cast<std::size_t>(std::floor(pos));
    if (i + 1 >= v.size()) return v.back();
    double frac = pos - static_cast<double>(i);
    return v[i] + frac * (v[i + 1] - v[i]);
}

namespace {
double mean(const std::vector<double>& v) {
    if (v.empty()) return 0;
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}
}  // namespace

Summary summarize(const RunResult& run) {
    std::vector<double> slow, comm, jct;
    for (const JobResult& j : run.jobs) {
        if (j.iterations_done == 0) continue;
        slow.push_back(j.mean_slowdown());
        comm.push_back(1e3 * j.comm_time_s / static_cast<double>(j.iterations_done));
        jct.push_back(j.jct_s(run.end_s));
    }
    Summary s;
    s.jobs = static_cast<int>(slow.size());
    s.mean_slowdown = mean(slow);
    s.p99_slowdown = percentile(slow, 99);
    s.mean_comm_ms = mean(comm);
    s.mean_jct_s = mean(jct);
    s.sched_ms_per_epoch = run.sched_ms_per_epoch();
    return s;
}

LowerBound lower_bound(const Topology& topo, const std::vector<SimJob>& jobs, double end_s) {
    const std::size_t n = jobs.size();
    std::vector<double> iso(n), begin(n), end(n);
    // Bytes each job puts on each link per iteration, as (link, bytes) lists.
    std::vector<std::vector<std::pair<LinkId, double>>> load(n);
    for (std::size_t j = 0; j < n; ++j) {
        iso[j] = isolated_iteration_s(jobs[j].profile, topo);
        begin[j] = jobs[j].arrival_s;
        end[j] = begin[j] + static_cast<double>(jobs[j].iterations) * iso[j];
        for (const CommPhase& p : jobs[j].profile.phases)
            for (const LinkUse& u : p.links) load[j].push_back({u.link, u.multiplicity * p.bytes_per_edge});
    }
    // Offered load on each link during job j's life: job k counts for the
    // share of j's life it overlaps.
    std::vector<double> offered(topo.links().size(), 0.0);
    LowerBound lb;
    std::vector<double> counted, comm, jct;
    for (std::size_t j = 0; j < n; ++j) {
        double life = end[j] - begin[j];
        for (std::size_t k = 0; k < n; ++k) {
            double overlap = std::min(end[j], end[k]) - std::max(begin[j], begin[k]);
            if (overlap <= 0 || iso[k] <= 0 || life <= 0) continue;
            for (const auto& lu : load[k]) offered[lu.first] += lu.second / iso[k] * (overlap / life);
        }
        double rho = 1;
        for (const auto& lu : load[j]) rho = std::max(rho, offered[lu.first] / topo.link(lu.first).capacity_Bps);
        for (std::size_t k = 0; k < n; ++k)
            for (const auto& lu : load[k]) offered[lu.first] = 0;
        lb.slowdown.push_back(rho);
        if (end_s > 0 && begin[j] >= end_s) continue;
        counted.push_back(rho);
        double c = 0;
        for (const CommPhase& p : jobs[j].profile.phases) c += phase_alone_s(p, topo);
        comm.push_back(1e3 * c);
        jct.push_back(static_cast<double>(jobs[j].iterations) * iso[j] * rho);
    }
    lb.summary.jobs = static_cast<int>(counted.size());
    lb.summary.mean_slowdown = mean(counted);
    lb.summary.p99_slowdown = percentile(counted, 99);
    lb.summary.mean_comm_ms = mean(comm);
    lb.summary.mean_jct_s = mean(jct);
    return lb;
}

}  // namespace sim
}  // namespace harmonics
