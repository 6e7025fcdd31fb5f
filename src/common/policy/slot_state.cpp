#include "policy/slot_state.h"

namespace harmonics {

double stretch_cost(const SlotProblem& p) {
    double c = 0;
    for (const SlotJob& j : p.jobs)
        if (j.isolated_period_s > 0) c += j.period_slots * p.slot_s / j.isolated_period_s - 1;
    return c;
}

Bursts bursts_of(const SlotJob& j) {
    Bursts b;
    std::vector<bool> busy(j.period_slots, false);
    for (const SlotDemand& d : j.demand)
        for (int t = 0; t < j.period_slots; ++t) busy[t] = busy[t] || d.pattern[t] > 0;
    const int P = j.period_slots;
    for (int t = 0; t < P; ++t) {
        if (busy[t] && !busy[(t + P - 1) % P]) b.starts.push_back(t);
        if (busy[t] && !busy[(t + 1) % P]) b.ends.push_back(t + 1);
    }
    return b;
}

}  // namespace harmonics
