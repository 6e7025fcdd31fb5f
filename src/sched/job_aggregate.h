// Per-job aggregation of the hooks' profile reports. Each rank reports its
// own view of the iteration; the job's profile is the median over the ranks
// heard from recently, so a missing or late rank, or one rank's jitter, does
// not move it. Memory is bounded: one record per rank, at most max_ranks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace harmonics::sched {

struct PhaseSample {
    double start_offset_s = 0;
    double duration_s = 0;
    double bytes = 0;
    double held_s = 0;           // the gate held the phase's start this long
};

struct RankSample {
    double period_s = 0;
    std::vector<PhaseSample> phases;
    double received_s = 0;       // monotonic time the report arrived
    double iteration_start_s = 0; // its latest iteration's first collective, this schedd's clock; 0 unknown
};

struct JobSummary {
    int ranks = 0;               // ranks that contributed
    double period_s = 0;         // smoothed median period
    std::vector<PhaseSample> phases;
    // The latest iteration start any fresh rank reported (schedd's clock,
    // Unix seconds; 0 none): where the job's collectives come now.
    double last_collective_s = 0;
};

// A cross-leaf job as coordd sees it: each leaf's summary of the ranks it
// hosts. The job's summary is the one whose period is the rank-weighted median
// over the leaves that measured its phases (each leaf's summary whole: its
// phases belong to its period), so one leaf's late or jittery view does not
// move it and the result does not depend on which leaf reported first. Ties
// go to the earlier leaf. Leaves with a period but no phases count only when
// none has phases. Empty when no leaf measured a period.
struct LeafSummary {
    int ranks = 0;               // ranks reporting there; 0 counts as one
    double period_s = 0;
    const std::vector<PhaseSample>* phases = nullptr;
};
std::optional<std::size_t> median_leaf(const std::vector<LeafSummary>& leaves);

class JobAggregate {
public:
    JobAggregate() = default;
    explicit JobAggregate(std::size_t max_ranks) : max_ranks_(max_ranks) {}
    // False when the report is unusable (non-positive or absurd period, too
    // many phases, rank beyond the bound); such reports are counted, not kept.
    bool add(int rank, RankSample s);
    // Median over ranks heard from within `fresh_s`; nullopt when none is.
    // Smooths the compute (period less phases and holds) over calls (EWMA)
    // unless it moved by more than 20%, which is a real change of rhythm, not
    // jitter; the period is that compute plus the phases and holds.
    std::optional<JobSummary> summarize(double now_s, double fresh_s);
    void forget(int rank) { ranks_.erase(rank); }
    std::size_t ranks() const { return ranks_.size(); }
    std::uint64_t rejected() const { return rejected_; }

    static constexpr std::size_t kMaxPhases = 64;

private:
    std::size_t max_ranks_ = 4096;
    std::map<int, RankSample> ranks_;
    double smoothed_compute_ = -1;   // none yet
    std::uint64_t rejected_ = 0;
};

}  // namespace harmonics::sched
