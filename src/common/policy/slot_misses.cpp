#include "policy/slot_misses.h"

#include "policy/release.h"

namespace harmonics {

int slot_misses(const std::vector<double>& delay_s, double period_s, double cycle_s, double late_s, bool cyclic) {
    const size_t n = delay_s.size();
    if (n == 0 || period_s <= 0) return 0;
    JobDecision gate;
    gate.gated = true;
    gate.period_s = period_s;
    gate.late_s = late_s;
    ReleaseMemory mem;
    const size_t passes = cyclic ? 2 : 1;
    int misses = 0;
    double release = 0;   // slot 0, on time
    size_t slot = 0;      // the slot `release` belongs to
    while (slot < passes * n) {
        const double ready = release + cycle_s + delay_s[slot % n];
        const double next = next_release_s(gate, ready, mem);
        const size_t to = static_cast<size_t>(next / period_s + 1e-9);
        // Released past the slot after this one: the gate held it, or it ran
        // a whole period late; every slot it skipped is one missed.
        const size_t first_counted = cyclic ? n : 0;
        for (size_t skipped = slot + 1; skipped < to; ++skipped) misses += skipped >= first_counted;
        release = next;
        slot = to > slot ? to : slot + 1;
    }
    return misses;
}

}  // namespace harmonics
