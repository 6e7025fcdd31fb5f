// optimal: the cluster's slot-grid problems, one per component of jobs that
// share switch links, solved together as one MILP.
#include "policy/optimal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>

#include "policy/harmonics_local.h"

namespace harmonics {
namespace {

// The links the slot-grid problem is about: switch uplinks and downlinks.
// NICs are never shared by two jobs' rings in a way a shift can fix.
std::vector<LinkId> switch_links(const Topology& topo, const JobProfile& job) {
    std::set<LinkId> out;
    for (const CommPhase& ph : job.phases)
        for (const LinkUse& u : ph.links) {
            LinkKind k = topo.link(u.link).kind;
            if (u.multiplicity > 0 && (k == LinkKind::SwitchUp || k == LinkKind::SwitchDown)) out.insert(u.link);
        }
    return {out.begin(), out.end()};
}

int find(std::vector<int>& parent, int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

// Jobs grouped by shared switch links (union-find), each group in job order.
std::vector<std::vector<int>> components(const std::vector<std::vector<LinkId>>& links) {
    const int n = static_cast<int>(links.size());
    std::vector<int> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    std::map<LinkId, int> first_user;
    for (int i = 0; i < n; ++i)
        for (LinkId l : links[i]) {
            auto [it, fresh] = first_user.insert({l, i});
            if (!fresh) parent[find(parent, i)] = find(parent, it->second);
        }
    std::map<int, std::vector<int>> by_root;
    for (int i = 0; i < n; ++i)
        if (!links[i].empty()) by_root[find(parent, i)].push_back(i);
    std::vector<std::vector<int>> out;
    for (auto& [r, v] : by_root) out.push_back(std::move(v));
    return out;
}

// Same jobs, each period within `tol` (relative) of the one last decided on.
bool same_jobs_within(const std::map<JobId, double>& last, const std::map<JobId, double>& now, double tol) {
    if (last.size() != now.size()) return false;
    for (auto a = last.begin(), b = now.begin(); a != last.end(); ++a, ++b)
        if (a->first != b->first || std::abs(b->second - a->second) > tol * a->second) return false;
    return true;
}

struct Built {
    SlotProblem sp;
    std::vector<int> job_of;   // sp.jobs[k] is jobs[job_of[k]]
};

// One component's problem, periods and candidates as harmonics' local
// scheduler chooses them. Empty (no jobs) when no collision is possible.
Built build(const Topology& topo, const std::vector<JobProfile>& jobs, const std::vector<int>& members,
            const std::vector<std::vector<LinkId>>& links, const PolicyOptions& opts, const LocalTuning& tune,
            int max_shifts) {
    Built b;
    b.sp.slot_s = opts.slot_s;
    std::set<LinkId> all;
    for (int i : members) all.insert(links[i].begin(), links[i].end());
    // Uplink and downlink of a switch carry the same rings: half weight each.
    for (LinkId l : all) b.sp.links.push_back({l, topo.link(l).capacity_Bps, 0, 0.5});
    std::vector<double> T;
    std::int64_t longest = 1;
    for (int i : members) {
        // The least period harmonics' Local Scheduler gives a job: T_j and the
        // guard (a gate missed by a hair costs a whole period).
        T.push_back(iteration_period_s(jobs[i]) * (1 + tune.guard));
        longest = std::max<std::int64_t>(longest, std::llround(std::ceil(T.back() * (1 + tune.max_stretch) / opts.slot_s)));
    }
    const std::int64_t cap = std::min<std::int64_t>(tune.max_hyper_slots, longest * tune.hyper_factor);
    std::vector<int> per = harmonic_periods(T, std::vector<int>(T.size(), 0), opts.slot_s, tune.max_stretch, cap);
    for (size_t m = 0; m < members.size(); ++m) {
        const JobProfile& j = jobs[members[m]];
        if (per[m] <= 0) {   // not commensurate with the rest: runs free, load on every slot
            for (size_t k = 0; k < b.sp.links.size(); ++k) b.sp.links[k].background += average_load(b.sp, j, k);
            continue;
        }
        add_slot_job(b.sp, j, per[m], 0, max_shifts);
        b.job_of.push_back(members[m]);
    }
    finalize_hyperperiod(b.sp, cap);
    // Peak demands summed per link within capacity: nothing to schedule.
    std::vector<double> peak(b.sp.links.size());
    for (size_t k = 0; k < peak.size(); ++k) peak[k] = b.sp.links[k].background;
    for (const SlotJob& sj : b.sp.jobs)
        for (const SlotDemand& d : sj.demand) peak[d.link] += *std::max_element(d.pattern.begin(), d.pattern.end());
    if (std::all_of(peak.begin(), peak.end(), [](double x) { return x <= 1.0 + 1e-9; })) {
        b.sp.jobs.clear();
        b.job_of.clear();
    }
    return b;
}

}  // namespace

Decisions OptimalPolicy::decide(const Topology& topo, const std::vector<JobProfile>& jobs, double,
                                EpochReason why) {
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    std::map<JobId, double> periods;
    for (const JobProfile& j : jobs) periods[j.id] = iteration_period_s(j);
    const LocalTuning tune = local_tuning(opts_);
    // The optimum of an unchanged problem is unchanged: a periodic epoch with
    // the same jobs, their periods within harmonics' keep tolerance of those
    // last solved for, keeps the last solve.
    if (why == EpochReason::Epoch && same_jobs_within(last_periods_, periods, tune.keep_tolerance)) {
        Decisions d = last_;
        d.sched_time_s = elapsed();
        return d;
    }

    std::vector<std::vector<LinkId>> links;
    for (const JobProfile& j : jobs) links.push_back(switch_links(topo, j));
    const std::vector<std::vector<int>> comps = components(links);
    std::vector<Built> built;
    // CBC cannot stop inside an LP solve: the model must be small enough for
    // its root LP to finish well within the time limit.
    const long budget = std::max(kMinNonzeros, static_cast<long>(kNonzerosPerSecond * opts_.time_limit_s));
    for (shifts_ = tune.max_shifts;; shifts_ = std::max(1, shifts_ / 2)) {
        built.clear();
        problems_.clear();
        for (const auto& c : comps) {
            Built b = build(topo, jobs, c, links, opts_, tune, shifts_);
            if (b.sp.jobs.empty()) continue;
            problems_.push_back(b.sp);
            built.push_back(std::move(b));
        }
        if (shifts_ == 1 || milp_nonzeros(problems_) <= budget) break;
    }
    std::vector<SlotSolution> sol = solve_milp(problems_, opts_.time_limit_s - elapsed(), &report_);
    if (!problems_.empty()) {
        solves_++;
        proven_ += report_.optimal ? 1 : 0;
        largest_gap_ = std::max(largest_gap_, report_.gap);
        longest_solve_s_ = std::max(longest_solve_s_, elapsed());
        fewest_shifts_ = solves_ == 1 ? shifts_ : std::min(fewest_shifts_, shifts_);
    }

    Decisions d;
    for (size_t q = 0; q < built.size(); ++q)
        for (size_t k = 0; k < built[q].job_of.size(); ++k) {
            JobDecision jd;
            jd.gated = true;
            jd.period_s = built[q].sp.jobs[k].period_slots * opts_.slot_s;
            jd.shift_s = sol[q].shift[k] * opts_.slot_s;
            jd.origin_s = 0;   // shifts on the absolute slot grid, as harmonics
            d.jobs[jobs[built[q].job_of[k]].id] = jd;
        }
    last_periods_ = std::move(periods);
    last_ = d;
    d.sched_time_s = elapsed();
    return d;
}

std::vector<std::pair<std::string, double>> OptimalPolicy::solver_figures() const {
    return {{"solves", solves_},
            {"proven_optimal", proven_},
            {"time_limit_s", opts_.time_limit_s},
            {"largest_gap_pct", 100 * largest_gap_},
            {"longest_solve_s", longest_solve_s_},
            {"fewest_shifts_per_job", fewest_shifts_}};
}

std::unique_ptr<Policy> make_optimal_policy(const PolicyOptions& opts) {
    return std::make_unique<OptimalPolicy>(opts);
}

}  // namespace harmonics
