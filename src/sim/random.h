// A seeded random source whose sequence is the same on every platform:
// mt19937_64 is fully specified by the standard, while the standard
// distributions are not, so the few draws the simulator needs are done here.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace harmonics {
namespace sim {

class Random {
public:
    explicit Random(std::uint64_t seed) : gen_(seed) {}
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    // Uniform integer in [0, n).
    std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>(uniform() * static_cast<double>(n)); }
    // Exponential with the given rate (mean 1/rate).
    double exponential(double rate) { return -std::log1p(-uniform()) / rate; }

private:
    std::mt19937_64 gen_;
};

}  // namespace sim
}  // namespace harmonics
