// crux: GPU intensity, priority compression into hardware classes.
#include "policy/crux.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace harmonics {

double crux_intensity(const Topology& topo, const JobProfile& job) {
    std::map<LinkId, double> bytes;
    for (const CommPhase& ph : job.phases)
        for (const LinkUse& u : ph.links) bytes[u.link] += u.multiplicity * ph.bytes_per_edge;
    double comm_s = 0;
    for (const auto& [l, b] : bytes) {
        double cap = topo.link(l).capacity_Bps;
        if (cap > 0) comm_s = std::max(comm_s, b / cap);
    }
    if (comm_s <= 0) return std::numeric_limits<double>::infinity();
    double gpus = static_cast<double>(std::max<size_t>(1, job.nodes.size()));
    return job.compute_s * gpus / comm_s;
}

std::vector<int> compress_priorities(const std::vector<double>& intensity, int classes) {
    const size_t n = intensity.size();
    std::vector<int> out(n, 0);
    if (n == 0) return out;
    classes = std::max(1, classes);
    // Log scale: intensities span orders of magnitude and what matters is
    // their ratio. Infinite (no traffic) goes just above the most intense,
    // zero (no compute) just below the least.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double x : intensity)
        if (x > 0 && std::isfinite(x)) {
            lo = std::min(lo, std::log(x));
            hi = std::max(hi, std::log(x));
        }
    if (!std::isfinite(lo)) lo = hi = 0;
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
        double x = intensity[i];
        v[i] = !(x > 0) ? lo - 1 : std::isfinite(x) ? std::log(x) : hi + 1;
    }
    // Distinct values, most intense first, with how many jobs hold each.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
    std::vector<double> val;
    std::vector<double> cnt;
    std::vector<int> group(n);
    for (size_t i : order) {
        if (val.empty() || val.back() - v[i] > 1e-9) {
            val.push_back(v[i]);
            cnt.push_back(0);
        }
        cnt.back() += 1;
        group[i] = static_cast<int>(val.size()) - 1;
    }
    const int m = static_cast<int>(val.size());
    std::vector<int> cls(m);
    if (m <= classes) {
        std::iota(cls.begin(), cls.end(), 0);
    } else {
        // dp[k][b]: least within-class squared spread of values 0..b in k+1 classes.
        std::vector<double> sw(m + 1, 0), sx(m + 1, 0), sxx(m + 1, 0);
        for (int i = 0; i < m; ++i) {
            sw[i + 1] = sw[i] + cnt[i];
            sx[i + 1] = sx[i] + cnt[i] * val[i];
            sxx[i + 1] = sxx[i] + cnt[i] * val[i] * val[i];
        }
        auto spread = [&](int a, int b) {  // values a..b inclusive
            double w = sw[b + 1] - sw[a], x = sx[b + 1] - sx[a], xx = sxx[b + 1] - sxx[a];
            return std::max(0.0, xx - x * x / w);
        };
        const double inf = std::numeric_limits<double>::infinity();
        std::vector<std::vector<double>> dp(classes, std::vector<double>(m, inf));
        std::vector<std::vector<int>> from(classes, std::vector<int>(m, 0));
        for (int b = 0; b < m; ++b) dp[0][b] = spread(0, b);
        for (int k = 1; k < classes; ++k)
            for (int b = k; b < m; ++b)
                for (int a = k; a <= b; ++a) {
                    double c = dp[k - 1][a - 1] + spread(a, b);
                    if (c < dp[k][b] - 1e-15) {
                        dp[k][b] = c;
                        from[k][b] = a;
                    }
                }
        int b = m - 1;
        for (int k = classes - 1; k >= 0; --k) {
            int a = k == 0 ? 0 : from[k][b];
            for (int i = a; i <= b; ++i) cls[i] = k;
            b = a - 1;
        }
    }
    for (size_t i = 0; i < n; ++i) out[i] = cls[group[i]];
    return out;
}

Decisions CruxPolicy::decide(const Topology& topo, const std::vector<JobProfile>& jobs, double, EpochReason) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double> intensity;
    for (const JobProfile& j : jobs) intensity.push_back(crux_intensity(topo, j));
    std::vector<int> prio = compress_priorities(intensity, kClasses);
    Decisions d;
    for (size_t i = 0; i < jobs.size(); ++i) {
        JobDecision jd;
        jd.gated = false;   // no time shifts: priorities only
        jd.priority = prio[i];
        d.jobs[jobs[i].id] = jd;
    }
    d.sched_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return d;
}

std::unique_ptr<Policy> make_crux_policy() { return std::make_unique<CruxPolicy>(); }

}  // namespace harmonics
