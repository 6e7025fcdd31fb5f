// Brute-force enumerator: an odometer over the jobs' candidate shifts.
#include "policy/brute_force.h"

#include <limits>

namespace harmonics {

SlotSolution brute_force(const SlotProblem& p, std::uint64_t max_combinations) {
    SlotSolution best;
    const size_t n = p.jobs.size();
    std::uint64_t combos = 1;
    for (const SlotJob& j : p.jobs) {
        std::uint64_t c = j.fixed_shift >= 0 ? 1 : j.shifts.size();
        if (c == 0 || combos > max_combinations / c) return best;
        combos *= c;
    }
    std::vector<size_t> idx(n, 0);
    std::vector<int> shift(n);
    auto load = [&] {
        for (size_t i = 0; i < n; ++i)
            shift[i] = p.jobs[i].fixed_shift >= 0 ? p.jobs[i].fixed_shift : p.jobs[i].shifts[idx[i]];
    };
    best.cost = std::numeric_limits<double>::infinity();
    for (std::uint64_t k = 0; k < combos; ++k) {
        load();
        double c = predicted_cost(p, shift);
        if (c < best.cost - 1e-12) {
            best.cost = c;
            best.shift = shift;
        }
        // Advance the odometer, last job fastest.
        for (size_t i = n; i-- > 0;) {
            if (p.jobs[i].fixed_shift >= 0) continue;
            if (++idx[i] < p.jobs[i].shifts.size()) break;
            idx[i] = 0;
        }
    }
    best.optimal = true;
    return best;
}

}  // namespace harmonics
