#include "policy/slot_delays.h"

#include <algorithm>
#include <map>

namespace harmonics {
namespace {

// The delay the collisions of a plan still predict cost its jobs, slot by
// slot: f(job, link, t, d) for every slot t of the hyperperiod (or horizon) in
// which job `job` loses d slots of its own time on link `link`. Each slot's
// excess on a link is shared by the jobs loading it then in proportion to
// their demand (fair sharing), and a job's share of `e` slots of link
// capacity costs it e / peak slots at its own rate.
template <typename F>
void for_each_delay(const SlotProblem& p, const std::vector<int>& shift, F&& f) {
    const int H = p.hyperperiod_slots;
    if (H <= 0) return;
    std::vector<std::vector<double>> load(p.links.size());
    std::vector<double> mix_mean(p.links.size(), 0);
    for (size_t k = 0; k < p.links.size(); ++k) {
        load[k].assign(H, p.links[k].background);
        for (const auto& [y, pr] : p.links[k].background_mix) mix_mean[k] += y * pr;
    }
    auto demand_at = [&](size_t i, const SlotDemand& d, int t) {
        const int P = p.jobs[i].period_slots;
        return d.pattern[((t - shift[i]) % P + P) % P];
    };
    // Only the slots each job communicates in: O(bursts · H / P) per job, not O(H).
    auto for_busy = [&](size_t i, const SlotDemand& d, auto&& g) {
        const int P = p.jobs[i].period_slots;
        const int s = ((shift[i] % P) + P) % P;
        for (int t0 = 0; t0 < P; ++t0) {
            if (d.pattern[t0] == 0) continue;
            for (int t = (t0 + s) % P; t < H; t += P) g(t);
        }
    };
    for (size_t i = 0; i < p.jobs.size(); ++i)
        for (const SlotDemand& d : p.jobs[i].demand)
            for_busy(i, d, [&](int t) { load[d.link][t] += demand_at(i, d, t); });
    for (size_t i = 0; i < p.jobs.size(); ++i)
        for (const SlotDemand& d : p.jobs[i].demand) {
            double peak = *std::max_element(d.pattern.begin(), d.pattern.end());
            if (peak <= 0) continue;
            for_busy(i, d, [&](int t) {
                double x = demand_at(i, d, t);
                if (x <= 0) return;
                double e = slot_excess(p.links[d.link], load[d.link][t]);
                if (e > 0) f(i, d.link, t, e * x / (load[d.link][t] + mix_mean[d.link]) / peak);
            });
        }
}

}  // namespace

std::vector<double> collision_delays_s(const SlotProblem& p, const std::vector<int>& shift) {
    const size_t L = p.links.size();
    std::vector<double> per_link(p.jobs.size() * L, 0);   // slots of delay over the horizon
    for_each_delay(p, shift, [&](size_t i, int link, int, double d) { per_link[i * L + link] += d; });
    std::vector<double> out(p.jobs.size(), 0);
    for (size_t i = 0; i < p.jobs.size() && p.hyperperiod_slots > 0; ++i) {
        double worst = 0;
        for (size_t k = 0; k < L; ++k) worst = std::max(worst, per_link[i * L + k]);
        out[i] = worst * p.slot_s * p.jobs[i].period_slots / p.hyperperiod_slots;
    }
    return out;
}

std::vector<std::vector<double>> iteration_delays_s(const SlotProblem& p, const std::vector<int>& shift) {
    const size_t L = p.links.size();
    const int H = p.hyperperiod_slots;
    std::vector<std::vector<double>> per_link(p.jobs.size() * L);
    std::vector<std::vector<double>> out(p.jobs.size());
    if (H <= 0) return out;
    std::vector<int> first(p.jobs.size());   // each job's shift within its period
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const int P = p.jobs[i].period_slots;
        const int s = first[i] = ((shift[i] % P) + P) % P;
        // Cyclic: iteration n runs over slots [s + n·P, s + (n+1)·P) modulo
        // the hyperperiod. A horizon: iteration n over [s + (n-1)·P, s + n·P),
        // the slots before its first whole period iteration 0.
        const size_t n = p.cyclic ? static_cast<size_t>(std::max(1, H / P))
                                  : static_cast<size_t>((H - s + P - 1) / P) + 1;
        for (size_t k = 0; k < L; ++k) per_link[i * L + k].assign(n, 0);
        out[i].assign(n, 0);
    }
    for_each_delay(p, shift, [&](size_t i, int link, int t, double d) {
        const int P = p.jobs[i].period_slots, s = first[i];
        size_t it = p.cyclic ? static_cast<size_t>(((t - s) % H + H) % H / P)
                             : t < s ? 0 : static_cast<size_t>((t - s) / P) + 1;
        it = std::min(it, per_link[i * L + link].size() - 1);
        per_link[i * L + link][it] += d;
    });
    for (size_t i = 0; i < p.jobs.size(); ++i)
        for (size_t it = 0; it < out[i].size(); ++it) {
            double worst = 0;
            for (size_t k = 0; k < L; ++k) worst = std::max(worst, per_link[i * L + k][it]);
            out[i][it] = worst * p.slot_s;
        }
    return out;
}

std::vector<double> delay_by_shift(const SlotProblem& p, const std::vector<int>& shift, size_t k) {
    const SlotJob& job = p.jobs[k];
    const int H = p.hyperperiod_slots, P = job.period_slots;
    std::vector<double> worst(P > 0 ? P : 0, 0);   // per shift: the worst link's slots of delay over H
    if (H <= 0 || P <= 0) return worst;
    std::vector<double> on_link(P, 0);             // per shift: the link at hand's
    std::vector<double> prefix(2 * P + 1);
    for (const SlotDemand& d : job.demand) {
        const double peak = *std::max_element(d.pattern.begin(), d.pattern.end());
        if (peak <= 0) continue;
        const SlotLink& link = p.links[d.link];
        double mix_mean = 0;
        for (const auto& [y, pr] : link.background_mix) mix_mean += y * pr;
        // The link's load without job k, slot by slot over the hyperperiod.
        std::vector<double> base(H, link.background);
        for (size_t i = 0; i < p.jobs.size(); ++i) {
            if (i == k) continue;
            const int Pi = p.jobs[i].period_slots;
            const int s = ((shift[i] % Pi) + Pi) % Pi;
            for (const SlotDemand& o : p.jobs[i].demand) {
                if (o.link != d.link) continue;
                for (int t0 = 0; t0 < Pi; ++t0)
                    if (o.pattern[t0] != 0)
                        for (int t = (t0 + s) % Pi; t < H; t += Pi) base[t] += o.pattern[t0];
            }
        }
        // k's pattern as runs of slots at one demand level.
        std::map<double, std::vector<std::pair<int, int>>> runs;   // level -> (first slot, length)
        for (int t0 = 0; t0 < P;) {
            const double dem = d.pattern[t0];
            int len = 1;
            while (t0 + len < P && d.pattern[t0 + len] == dem) ++len;
            if (dem > 0) runs[dem].push_back({t0, len});
            t0 += len;
        }
        std::fill(on_link.begin(), on_link.end(), 0);
        for (const auto& [dem, rs] : runs) {
            // What one slot of k at this level costs k at each grid slot,
            // summed over the hyperperiod's repeats of k's period.
            std::vector<double> fold(P, 0);
            for (int t = 0; t < H; ++t) {
                const double load = base[t] + dem;
                const double e = slot_excess(link, load);
                if (e > 0) fold[t % P] += e * dem / (load + mix_mean) / peak;
            }
            prefix[0] = 0;
            for (int u = 0; u < 2 * P; ++u) prefix[u + 1] = prefix[u] + fold[u % P];
            for (int x = 0; x < P; ++x)
                for (const auto& [first, len] : rs) {
                    const int u = (first + x) % P;
                    on_link[x] += prefix[u + len] - prefix[u];
                }
        }
        for (int x = 0; x < P; ++x) worst[x] = std::max(worst[x], on_link[x]);
    }
    for (double& w : worst) w *= p.slot_s * P / H;
    return worst;
}

}  // namespace harmonics
