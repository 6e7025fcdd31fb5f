// bench-shifts: how far shifts alone can take a scenario once its periods are
// chosen. Every job is gated at the period given for its model; a coordinate
// descent over the shifts from random starts, each candidate run through the
// simulator, finds the lowest mean communication time per iteration (or mean
// slowdown) it can, and prints it beside the jobs' contention-free figures.
// doc/evaluation.md uses it on the testbed's communication target: what the
// harmonic periods harmonics chooses allow, and which periods reach the bound.
//   usage: bench-shifts --period MODEL=MS[,MODEL=MS...] [--scenario NAME]
//                       [--restarts N] [--objective comm|slowdown] [--seed N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/scenario.h"

using namespace harmonics;
using namespace harmonics::sim;

namespace {

struct Figures {
    double comm_ms = 0, slowdown = 0, jct_s = 0;
};

class ShiftSearch {
public:
    ShiftSearch(Scenario& sc, std::map<std::string, double> period_ms, bool by_comm)
        : sc_(sc), jobs_(prepare_jobs(sc)), by_comm_(by_comm) {
        for (const SimJob& j : jobs_) {
            auto p = period_ms.find(j.model);
            if (p == period_ms.end()) throw std::invalid_argument("no --period for model " + j.model);
            period_ms_.push_back(p->second);
        }
    }

    Figures measure(const std::vector<double>& shift_ms) const {
        EngineConfig ec;
        for (size_t i = 0; i < jobs_.size(); ++i) {
            JobDecision d;
            d.gated = true;
            d.period_s = period_ms_[i] / 1000;
            d.shift_s = shift_ms[i] / 1000;
            ec.fixed[jobs_[i].id] = d;
        }
        const Summary s = summarize(simulate(sc_.topo, jobs_, nullptr, ec));
        return {s.mean_comm_ms, s.mean_slowdown, s.mean_jct_s};
    }

    double score(const Figures& f) const { return by_comm_ ? f.comm_ms : f.slowdown; }

    // Coordinate descent from `shift_ms` (job 0 stays at 0: only relative
    // phases matter), steps of 8 ms halving down to 0.5 ms.
    double descend(std::vector<double>& shift_ms) const {
        double best = score(measure(shift_ms));
        for (double step = 8; step >= 0.5; step /= 2)
            for (bool moved = true; moved;) {
                moved = false;
                for (size_t i = 1; i < shift_ms.size(); ++i)
                    for (double dir : {-1.0, 1.0}) {
                        const double was = shift_ms[i];
                        shift_ms[i] = std::fmod(was + dir * step + period_ms_[i], period_ms_[i]);
                        const double v = score(measure(shift_ms));
                        if (v < best - 1e-9) {
                            best = v;
                            moved = true;
                        } else {
                            shift_ms[i] = was;
                        }
                    }
            }
        return best;
    }

    std::vector<double> random_start(std::mt19937& rng) const {
        std::vector<double> s(period_ms_.size(), 0);
        for (size_t i = 1; i < s.size(); ++i) s[i] = std::uniform_real_distribution<double>(0, period_ms_[i])(rng);
        return s;
    }

    const std::vector<SimJob>& jobs() const { return jobs_; }

private:
    Scenario& sc_;
    std::vector<SimJob> jobs_;
    std::vector<double> period_ms_;
    bool by_comm_;
};

std::map<std::string, double> parse_periods(const std::string& arg) {
    std::map<std::string, double> out;
    std::stringstream ss(arg);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const size_t eq = item.find('=');
        char* end = nullptr;
        const double ms = eq == std::string::npos ? 0 : std::strtod(item.c_str() + eq + 1, &end);
        if (eq == std::string::npos || !end || *end || !(ms > 0))
            throw std::invalid_argument("--period: expected MODEL=MS, got '" + item + "'");
        out[item.substr(0, eq)] = ms;
    }
    return out;
}

// The usage on stderr for a mistake (exit 2), on stdout when asked (exit 0).
int usage(bool asked = false) {
    std::fprintf(asked ? stdout : stderr,
                 "usage: bench-shifts --period MODEL=MS[,MODEL=MS...] [--scenario NAME] [--restarts N]\n"
                 "                    [--objective comm|slowdown] [--seed N]\n");
    return asked ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string scenario = "testbed-paper", periods, objective = "comm";
    int restarts = 100;
    unsigned seed = 1;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") return usage(true);
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--period") periods = argv[i + 1];
        else if (a == "--scenario") scenario = argv[i + 1];
        else if (a == "--restarts") restarts = std::atoi(argv[i + 1]);
        else if (a == "--objective") objective = argv[i + 1];
        else if (a == "--seed") seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
        else return usage();
    }
    if (argc % 2 == 0 || periods.empty() || restarts < 1 || (objective != "comm" && objective != "slowdown"))
        return usage();
    try {
        Scenario sc = builtin_scenario(scenario);
        ShiftSearch search(sc, parse_periods(periods), objective == "comm");
        std::mt19937 rng(seed);
        std::vector<double> best_shift;
        double best = INFINITY;
        for (int r = 0; r < restarts; ++r) {
            std::vector<double> s = search.random_start(rng);
            const double v = search.descend(s);
            if (v < best) {
                best = v;
                best_shift = s;
            }
        }
        const Figures f = search.measure(best_shift);
        const Summary bound = lower_bound(sc.topo, search.jobs(), sc.duration_s).summary;
        std::printf("bench-shifts scenario=%s periods=%s objective=%s restarts=%d\n", scenario.c_str(),
                    periods.c_str(), objective.c_str(), restarts);
        std::printf("best comm_ms=%.2f slowdown=%.4f jct_s=%.2f shifts_ms=", f.comm_ms, f.slowdown, f.jct_s);
        for (size_t i = 0; i < best_shift.size(); ++i) std::printf("%s%.2f", i ? "," : "", best_shift[i]);
        std::printf("\nlower-bound comm_ms=%.2f slowdown=%.4f jct_s=%.2f\n", bound.mean_comm_ms, bound.mean_slowdown,
                    bound.mean_jct_s);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench-shifts: %s\n", e.what());
        return 1;
    }
    return 0;
}
