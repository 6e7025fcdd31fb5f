// optimal: the centralised exact optimum of the slot-grid problem over the
// whole cluster, as one MILP solved by CBC (policy/optimal_milp.h). Jobs are
// grouped into components that share a switch link; each component gets
// harmonic periods and a hyperperiod exactly as the harmonics local scheduler
// builds them (same LocalTuning), so both solve the same problem and differ
// only in scope (one leaf vs the whole cluster) and method. After
// PolicyOptions::time_limit_s CBC stops with its best solution; the gap to its
// lower bound is exposed by last_report(). CBC cannot stop inside an LP, so
// a model too big for the limit is rebuilt with fewer candidate shifts
// (shifts(); doc/baselines.md says what that means for quoting it). Built
// only with CBC: without it make_policy("optimal") returns null.
#pragma once

#include <map>
#include <memory>

#include "policy/optimal_milp.h"
#include "policy/policy.h"

namespace harmonics {

class OptimalPolicy : public Policy {
public:
    explicit OptimalPolicy(const PolicyOptions& opts) : opts_(opts) {}
    std::string name() const override { return "optimal"; }
    Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                     EpochReason why) override;

    // The last solve: proven optimal or not, cost, CBC's bound, relative gap,
    // model size and wall time.
    const MilpReport& last_report() const { return report_; }
    // The last decision's problems (one per component with contention).
    const std::vector<SlotProblem>& last_problems() const { return problems_; }

    // Candidate shifts per job in the last solve: harmonics' max_shifts
    // unless the size guard thinned them.
    int shifts() const { return shifts_; }

    // Over every solve so far: how many, how many CBC proved optimal within
    // the time limit, the largest gap of the others, the longest solve, the
    // fewest candidate shifts per job the size guard left.
    std::vector<std::pair<std::string, double>> solver_figures() const override;

    // Model-size guard: CBC cannot interrupt an LP solve, so the candidate
    // shifts per job are halved until the model has at most
    // max(kMinNonzeros, kNonzerosPerSecond · time_limit_s) nonzeros.
    static constexpr long kMinNonzeros = 20000;
    static constexpr double kNonzerosPerSecond = 20000;

private:
    PolicyOptions opts_;
    MilpReport report_;
    int shifts_ = 0;
    int solves_ = 0, proven_ = 0, fewest_shifts_ = 0;
    double largest_gap_ = 0, longest_solve_s_ = 0;
    std::vector<SlotProblem> problems_;
    std::map<JobId, double> last_periods_;
    Decisions last_;
};

std::unique_ptr<Policy> make_optimal_policy(const PolicyOptions& opts);

}  // namespace harmonics
