// Balanced fairness on one link with per-job caps, in a closed network: see
// free_running.h. Phi is the balance function: Phi(empty) = 1 and
//   Phi(A) = max( sum_{i in A} Phi(A - i) / C,  max_{i in A} Phi(A - i) / c_i ),
// the least value that keeps every job's rate Phi(A - i) / Phi(A) within its
// cap and their sum within the capacity C. The set A of jobs on the link has
// stationary weight Phi(A) * prod_{i in A} w_i * prod_{i not in A} o_i, and
// job i completes an iteration every o_i / P(i not on the link) on average.
#include "policy/free_running.h"

#include <algorithm>
#include <cmath>

namespace harmonics {

namespace {

// A job's work and time off in units of its own isolated iteration (scaling
// one job's pair scales every set's weight alike, and keeps products of many
// jobs' weights within range).
struct Scaled {
    long double w = 0, o = 0, cap = 1;
};

std::vector<Scaled> scale(const std::vector<FreeRunner>& jobs, const std::vector<double>& model_cap) {
    std::vector<Scaled> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
        const long double c = std::max(model_cap[i], 1e-9);
        const long double w = std::max(jobs[i].work_s, 0.0);
        // A job never off the link would have no think time to complete
        // from; a sliver of it keeps the ratio finite.
        const long double o = std::max<long double>(jobs[i].off_s, 1e-9L * (w / c) + 1e-15L);
        const long double t = o + w / c;
        out.push_back({w / t, o / t, c});
    }
    return out;
}

std::vector<double> exact(const std::vector<Scaled>& j, long double C) {
    const size_t n = j.size(), S = size_t{1} << n;
    std::vector<long double> phi(S, 0), out(n, 0);
    phi[0] = 1;
    long double Z = 0;
    for (size_t A = 0; A < S; ++A) {
        if (A != 0) {
            long double sum = 0, single = 0;
            for (size_t i = 0; i < n; ++i)
                if (A >> i & 1) {
                    sum += phi[A ^ (size_t{1} << i)];
                    single = std::max(single, phi[A ^ (size_t{1} << i)] / std::min(j[i].cap, C));
                }
            phi[A] = std::max(sum / C, single);
        }
        long double p = phi[A];
        for (size_t i = 0; i < n; ++i) p *= (A >> i & 1) ? j[i].w : j[i].o;
        Z += p;
        for (size_t i = 0; i < n; ++i)
            if (!(A >> i & 1)) out[i] += p;
    }
    std::vector<double> slow(n, 0);
    for (size_t i = 0; i < n; ++i) slow[i] = static_cast<double>(std::max(0.0L, j[i].o * Z / out[i] - 1));
    return slow;
}

// Coefficients of prod over all jobs of (o_j + w_j x): entry k sums the
// weights of the sets of k jobs on the link (without Phi).
std::vector<long double> set_sizes(const std::vector<Scaled>& j) {
    std::vector<long double> e{1};
    for (const Scaled& s : j) {
        e.push_back(0);
        for (size_t k = e.size() - 1; k > 0; --k) e[k] = e[k] * s.o + e[k - 1] * s.w;
        e[0] *= s.o;
    }
    return e;
}

// The same with job `s`'s factor divided out, in O(n). The coefficients of a
// product of real-rooted factors are log-concave, so the ratio f[k] / f[k-1]
// falls with k: dividing forward (from the constant term) is stable while it
// stays above w / o, backward (from the top term) once it is below. Each half
// is computed from its own end and they meet where the ratio crosses.
std::vector<long double> without(const std::vector<long double>& E, const Scaled& s) {
    const size_t n = E.size() - 1;
    std::vector<long double> f(n, 0);
    if (n == 0) return f;
    size_t m = n;
    for (size_t k = 1; k <= n; ++k)
        if (E[k] * s.o < s.w * E[k - 1]) {
            m = k;
            break;
        }
    f[0] = E[0] / s.o;
    for (size_t k = 1; k < m; ++k) f[k] = (E[k] - s.w * f[k - 1]) / s.o;
    if (m < n) {
        f[n - 1] = E[n] / s.w;
        for (size_t k = n - 1; k > m; --k) f[k - 1] = (E[k] - s.o * f[k]) / s.w;
    }
    for (long double& x : f) x = std::max(0.0L, x);
    return f;
}

// Every job at the same cap (j[0].cap): Phi depends on the set's size only.
std::vector<double> symmetric(const std::vector<Scaled>& j, long double C) {
    const size_t n = j.size();
    const long double cap = std::min(j[0].cap, C);
    std::vector<long double> phi(n + 1, 1);
    for (size_t k = 1; k <= n; ++k) phi[k] = phi[k - 1] * std::max<long double>(k / C, 1 / cap);
    auto weigh = [&](const std::vector<long double>& e) {
        long double s = 0;
        for (size_t k = 0; k < e.size(); ++k) s += phi[k] * e[k];
        return s;
    };
    const std::vector<long double> E = set_sizes(j);
    const long double Z = weigh(E);
    std::vector<double> slow(n, 0);
    // P(i off the link) = o_i * (sets of the others) / Z. Beyond about a
    // thousand jobs on one link Phi leaves long double's range: no estimate
    // then (the slot grid's price stands).
    for (size_t i = 0; i < n; ++i) {
        const long double others = weigh(without(E, j[i]));
        const long double x = Z / others - 1;
        if (!std::isfinite(static_cast<double>(x)) || others <= 0) return std::vector<double>(n, 0);
        slow[i] = static_cast<double>(std::max(0.0L, x));
    }
    return slow;
}

}  // namespace

std::vector<double> free_running_slowdowns(const std::vector<FreeRunner>& jobs, double capacity) {
    const size_t n = jobs.size();
    std::vector<double> none(n, 0);
    double caps = 0, work = 0, weighted = 0;
    for (const FreeRunner& r : jobs) {
        caps += r.cap;
        work += r.work_s;
        weighted += r.work_s * r.cap;
    }
    if (n < 2 || capacity <= 0 || caps <= capacity + 1e-12 || work <= 0) return none;
    if (n <= kExactRunners) {
        std::vector<double> cap(n);
        for (size_t i = 0; i < n; ++i) cap[i] = jobs[i].cap;
        return exact(scale(jobs, cap), capacity);
    }
    const double typical = weighted / work;
    return symmetric(scale(jobs, std::vector<double>(n, typical)), capacity);
}

}  // namespace harmonics
