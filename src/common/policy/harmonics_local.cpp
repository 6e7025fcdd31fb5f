// Harmonics' Local Scheduler: searches the leaf's plans (leaf_plans.h),
// judges them against running free (slack rule, change threshold, the
// absorbing and lock plans for jobs that never hold, the wide plan for jobs
// with no common period within MaxStretch), and keeps last epoch's
// schedule unless the new one is predicted to be better by more than the
// change threshold.
#include "policy/harmonics_local.h"

#include "policy/burst_packing.h"
#include "policy/free_running.h"
#include "policy/gate_waits.h"
#include "policy/leaf_plans.h"
#include "policy/lock_points.h"
#include "policy/slot_delays.h"
#include "policy/slot_misses.h"
#include "policy/release.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace harmonics {

using namespace local;

std::vector<LinkId> leaf_links(const Topology& topo, SwitchId leaf) {
    std::vector<LinkId> out;
    const Switch& s = topo.sw(leaf);
    if (s.up >= 0) out.push_back(s.up);
    if (s.down >= 0) out.push_back(s.down);
    return out;
}

bool links_as_wide(const Topology& topo, SwitchId leaf, SwitchId than) {
    const Switch& a = topo.sw(leaf);
    const Switch& b = topo.sw(than);
    auto wide = [&](LinkId mine, LinkId theirs) {
        return mine < 0 || (theirs >= 0 && topo.link(mine).capacity_Bps >= topo.link(theirs).capacity_Bps);
    };
    return wide(a.up, b.up) && wide(a.down, b.down);
}

bool job_loads(const JobProfile& job, const std::vector<LinkId>& links) {
    for (const CommPhase& ph : job.phases)
        for (const LinkUse& u : ph.links)
            if (std::find(links.begin(), links.end(), u.link) != links.end()) return true;
    return false;
}

double slack_share(double delay_s, double period_s, double isolated_s) {
    const double slack_s = period_s - isolated_s;
    if (slack_s > 0) return delay_s / slack_s;
    return delay_s > 0 ? std::numeric_limits<double>::infinity() : 0;
}

// In the daemons a phase family's or a drift plan's origin is wall-clock
// seconds (~1.8e9, a double's step there is 2.4e-7 s): origin + shift rounds,
// and summed first a decision with a shift differed from itself by that step
// (coordd's outrun count restarted every epoch for a member off window 0, and
// daemons.family_outrun failed when job 4 was one). The origins are
// subtracted first (exact for equal ones), and phases within a few steps of
// the larger origin are equal.
bool same_schedule(const JobDecision& a, const JobDecision& b) {
    if (a.gated != b.gated) return false;
    if (!a.gated) return true;
    if (std::abs(a.period_s - b.period_s) > 1e-12) return false;
    const double apart = (a.origin_s - b.origin_s) + (a.shift_s - b.shift_s);
    const double tolerance =
        1e-9 + 4 * std::numeric_limits<double>::epsilon() * std::max(std::abs(a.origin_s), std::abs(b.origin_s));
    const double phase = std::fmod(std::abs(apart), a.period_s);
    return phase < tolerance || a.period_s - phase < tolerance;
}

namespace {

SlotSolution search(const SlotProblem& sp, const LocalTuning& t, double budget_s, const std::vector<int>* warm,
                    SearchStats* st) {
    int open = 0;
    for (const SlotJob& j : sp.jobs) open += j.fixed_shift < 0;
    // Three quarters of the budget to the search, the rest to the off-grid polish.
    const double main_s = budget_s * 0.75;
    SlotSolution s = open <= t.exact_max_jobs ? solve_exact(sp, main_s, warm, st) : solve_greedy(sp, main_s, warm, st);
    // Polish collisions away off the grid; when none is left (found on the
    // grid or by the polish, which puts bursts flush against each other),
    // pack the bursts with margins so a newcomer finds one gap.
    if (s.cost > stretch_only(sp) + 1e-12) s = refine_with_anchors(sp, s, budget_s - main_s, st);
    if (s.cost > stretch_only(sp) + 1e-12) return s;
    return compact_bursts(sp, s, t.guard);
}

// Last epoch's schedule, with jobs that have none placed around it.
SlotSolution keep_previous(const SlotProblem& sp, const std::vector<int>& warm, const LocalTuning& t, double budget_s,
                           SearchStats* st) {
    bool complete = std::all_of(warm.begin(), warm.end(), [](int s) { return s >= 0; });
    if (complete) return {warm, predicted_cost(sp, warm), false, 0};
    SlotProblem sub = sp;
    for (size_t i = 0; i < sub.jobs.size(); ++i)
        if (warm[i] >= 0) sub.jobs[i].fixed_shift = warm[i];
    SlotSolution s = search(sub, t, budget_s, nullptr, st);
    s.optimal = false;
    return s;
}

}  // namespace

namespace {

// Whether every job of a plan absorbs the collisions the plan still predicts
// within its own slack (P_j - T_j). A gated job whose iterations run later
// than its period drifts off its slots until it loses one, and the plan then
// falls apart; one whose delay fits its slack stays on its grid, so what the
// plan predicts is what happens. On average (the mean delay within `margin`
// of the slack) and, with `replay_gate`, iteration by iteration (the gate
// replayed over the delays, `margin` of the slack to catch up in, never holds
// a job to its next slot): rings at periods of their own that slide through
// each other fit on average and miss slots while they meet (doc/scale.md,
// "Stop 35").
enum class SlackFit { Fits, PastOnAverage, MissesSlots };

SlackFit slack_fit(const SlotProblem& p, const std::vector<int>& shift, double margin, bool replay_gate,
                   double delay_scale = 1) {
    std::vector<double> delay = collision_delays_s(p, shift);
    for (double& d : delay) d *= delay_scale;
    std::vector<double> catch_up_s(p.jobs.size(), 0);   // margin of each job's slack
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        const SlotJob& j = p.jobs[i];
        if (j.isolated_period_s <= 0) continue;
        catch_up_s[i] = margin * (j.period_slots * p.slot_s - j.isolated_period_s);
        if (delay[i] > catch_up_s[i] + 1e-12) return SlackFit::PastOnAverage;
    }
    if (!replay_gate) return SlackFit::Fits;
    // Delays that sum, over the whole hyperperiod, to less than one
    // iteration's catch-up cannot put any iteration past it.
    bool may_miss = false;
    for (size_t i = 0; i < p.jobs.size() && !may_miss; ++i) {
        const SlotJob& j = p.jobs[i];
        if (j.isolated_period_s <= 0 || j.period_slots <= 0) continue;
        may_miss = delay[i] * p.hyperperiod_slots / j.period_slots > catch_up_s[i] + 1e-12;
    }
    if (!may_miss) return SlackFit::Fits;
    std::vector<std::vector<double>> by_iteration = iteration_delays_s(p, shift);
    for (std::vector<double>& it : by_iteration)
        for (double& d : it) d *= delay_scale;
    // Only a job that misses a slot with no late allowance is replayed again
    // with the allowance its decision would carry (costly: computed for
    // those alone); one that keeps its slots without keeps them with it.
    std::vector<bool> replayed(p.jobs.size(), false);
    bool any = false;
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        if (p.jobs[i].isolated_period_s <= 0 || delay[i] <= 0) continue;
        const double period_s = p.jobs[i].period_slots * p.slot_s;
        replayed[i] = slot_misses(by_iteration[i], period_s, period_s - catch_up_s[i], 0, p.cyclic) > 0;
        any = any || replayed[i];
    }
    if (!any) return SlackFit::Fits;
    const std::vector<int> late = late_slack_slots(p, shift, kDefaultLateTolerance, replayed);
    for (size_t i = 0; i < p.jobs.size(); ++i) {
        if (!replayed[i]) continue;
        const double period_s = p.jobs[i].period_slots * p.slot_s;
        if (slot_misses(by_iteration[i], period_s, period_s - catch_up_s[i], late[i] * p.slot_s, p.cyclic) > 0)
            return SlackFit::MissesSlots;
    }
    return SlackFit::Fits;
}

// A plan's problem without the jobs that run free and never hold (measuring
// only); needs some (b.holding_mix not empty).
SlotProblem without_measuring(const Built& b) {
    SlotProblem q = b.sp;
    for (size_t k = 0; k < q.links.size(); ++k) q.links[k].background_mix = b.holding_mix[k];
    return q;
}

// Per job of the leaf problem (n of them), the least period that absorbs
// the collision delay a plan predicts for it within `margin` of its slack
// (T_j + delay / margin), and at least the plan's own; 0 for jobs the plan
// does not place or another leaf decided.
std::vector<double> absorbing_periods(const Built& b, const std::vector<int>& shift, size_t n, double margin,
                                      double delay_scale) {
    std::vector<double> delay = collision_delays_s(b.sp, shift);
    for (double& d : delay) d *= delay_scale;
    std::vector<double> out(n, 0);
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
        const SlotJob& j = b.sp.jobs[k];
        if (j.fixed_shift >= 0 || j.isolated_period_s <= 0) continue;
        out[b.job_of[k]] = std::max(j.period_slots * b.sp.slot_s, j.isolated_period_s + delay[k] / margin);
    }
    return out;
}

// Whether every job of a plan, alone, fills each link it loads: two such
// rings that collide both finish late by the whole excess.
bool rings_fill_links(const SlotProblem& p) {
    for (const SlotJob& j : p.jobs)
        for (const SlotDemand& d : j.demand)
            if (*std::max_element(d.pattern.begin(), d.pattern.end()) < 1 - 1e-9) return false;
    return true;
}

enum class Verdict { NotSearched, PastSlack, NoBetter, Taken };

// Whether some job of the leaf's problem is gated by another leaf: a leaf
// that plans every gated job it sees predicts what its own plan alone
// decides; the others meet collisions they do not see.
bool fixed_elsewhere(const LeafProblem& problem) {
    return std::any_of(problem.fixed.begin(), problem.fixed.end(), [](const auto& f) { return f.second.gated; });
}

// Rounds of placing a measuring job where it locks and the gated jobs again around it.
constexpr int kLockRounds = 3;

// One plan searched: its best assignment, and whether that is simply last
// epoch's schedule kept.
struct Searched {
    SlotSolution sol;
    bool kept = false;
    bool open = false;   // the plan has jobs of this leaf to place
    bool calm = false;   // no collision is possible at all
};

// Whether a job the plan places with no schedule of last epoch's to keep
// was gated last epoch (at another period): placing it moves a running job.
bool moves_a_gated_job(const Built& b, const std::map<JobId, JobDecision>& previous) {
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
        if (b.sp.jobs[k].fixed_shift >= 0 || b.warm[k] >= 0) continue;
        auto p = previous.find(b.sp.jobs[k].id);
        if (p != previous.end() && p->second.gated) return true;
    }
    return false;
}

Searched search_plan(const Built& b, const LocalTuning& t, double budget_s, double threshold, SearchStats* st,
                     const std::map<JobId, JobDecision>& previous) {
    Searched out;
    for (const SlotJob& j : b.sp.jobs) out.open = out.open || j.fixed_shift < 0;
    if (!out.open) return out;
    out.calm = contention_free(b.sp);
    bool had_previous = false;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) had_previous = had_previous || (b.sp.jobs[k].fixed_shift < 0 && b.warm[k] >= 0);
    if (!had_previous) {
        out.sol = search(b.sp, t, budget_s, nullptr, st);
        return out;
    }
    SlotSolution keep = keep_previous(b.sp, b.warm, t, budget_s / 2, st);
    out.sol = search(b.sp, t, budget_s / 2, &keep.shift, st);
    // Running jobs move only for a gain worth the disruption. Last epoch's
    // schedule with newcomers placed around it is kept too, against other
    // plans as well: a plan that moves the running jobs must beat it by the
    // threshold (on the emulated testbed, a drift plan predicted 0.0002
    // cheaper than the harmonic plan extended around two running rings
    // re-planned all four, then fell back a few epochs later; doc/testbed.md).
    if (out.sol.cost >= keep.cost - threshold) {
        out.sol = keep;
        out.kept = !moves_a_gated_job(b, previous);
    }
    return out;
}

// What the waits for their first slots cost the jobs `b` gates at `shift`
// (policy/gate_waits.h), summed: a job kept where it was waits nothing.
// `not_held`: a job on the grid whose hooks never hold (a lock plan's
// measuring job), which waits for no slot.
double first_slot_charge(const Built& b, const std::vector<int>& shift, const LeafProblem& problem,
                         size_t not_held = SIZE_MAX) {
    double charge = 0;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
        const SlotJob& j = b.sp.jobs[k];
        if (j.fixed_shift >= 0 || k == not_held) continue;
        charge += first_wait_charge(problem.jobs[b.job_of[k]], problem.previous, (b.origin + shift[k]) * b.sp.slot_s,
                                    j.period_slots * b.sp.slot_s, problem.now_s);
    }
    return charge;
}

// Whether any decision differs from last epoch's.
bool changed_from(const LeafProblem& problem, const std::map<JobId, JobDecision>& jobs) {
    for (const auto& [id, dec] : jobs) {
        auto p = problem.previous.find(id);
        if (p == problem.previous.end() || !same_schedule(p->second, dec)) return true;
    }
    return false;
}

// The owned jobs' decisions: gated as `b` places them at `shift` (none when
// `b` has no jobs), taken with their collisions within `margin` of their
// slack; the rest free.
void emit_decisions(const Built& b, const std::vector<int>& shift, const LeafProblem& problem, LeafResult& res,
                    double margin) {
    if (!b.sp.jobs.empty()) {
        const std::vector<int> late = late_slack_slots(b.sp, shift, kDefaultLateTolerance);
        for (size_t k = 0; k < b.sp.jobs.size(); ++k) {
            if (b.sp.jobs[k].fixed_shift >= 0) continue;
            JobDecision dec;
            dec.gated = true;
            dec.period_s = b.sp.jobs[k].period_slots * b.sp.slot_s;  // the leaf's grid, maybe coarser
            dec.shift_s = shift[k] * b.sp.slot_s;
            dec.origin_s = b.origin * b.sp.slot_s;
            dec.late_s = late[k] * b.sp.slot_s;
            dec.owner_leaf = problem.leaf;
            dec.slack_margin = margin;
            res.jobs[problem.jobs[b.job_of[k]].id] = dec;
        }
    }
    for (const JobProfile& j : problem.jobs) {
        if (problem.fixed.count(j.id) || res.jobs.count(j.id)) continue;
        JobDecision dec;
        dec.owner_leaf = problem.leaf;
        res.jobs[j.id] = dec;
        res.free_jobs++;
    }
    res.changed = changed_from(problem, res.jobs);
}

// The first holding job a lock plan at `shift` takes past its slack as the
// coordinator sees the plan once decided: every gated job fixed at its
// decision on this leaf, over the drift horizon from now
// (CoordinationEpoch::resolve_conflicts), rather than over the plan's own
// hyperperiod; empty when none. The two views differ by a few percent of a
// delay: on testbed-paper with BERT-large 4 measuring, learnt in four
// iterations, the lock plan put BERT-large 5 at 0.76 of its slack and the
// coordinator at 0.805, freed it and, the lock gone, every job ran free.
std::string past_slack_as_decided(const LocalScheduler& local, const Topology& topo, const LeafProblem& problem,
                                  const Built& b, const std::vector<int>& shift, JobId measuring) {
    LeafResult plan;
    emit_decisions(b, shift, problem, plan, local.tuning().slack_margin);
    LeafProblem decided;
    decided.leaf = problem.leaf;
    decided.now_s = problem.now_s;
    std::map<JobId, const JobProfile*> profile;
    for (const JobProfile& j : problem.jobs) {
        auto f = problem.fixed.find(j.id);
        const JobDecision& d = f != problem.fixed.end() ? f->second : plan.jobs[j.id];
        if (!d.gated) continue;
        decided.jobs.push_back(j);
        decided.fixed[j.id] = d;
        profile[j.id] = &j;
    }
    for (const auto& [id, delay] : local.collision_delays(topo, decided)) {
        const JobDecision& d = decided.fixed.at(id);
        if (id != measuring && profile.at(id)->holds &&
            past_margin(local.tuning(), d, slack_share(delay, d.period_s, iteration_period_s(*profile.at(id)))))
            return "job " + std::to_string(id) + " past its slack as decided";
    }
    return "";
}

}  // namespace

LeafResult LocalScheduler::decide_plans(const Topology& topo, const LeafProblem& problem) const {
    const auto t0 = std::chrono::steady_clock::now();
    LeafResult res;
    const LeafBuilder builder(opts_, tuning_, topo, problem);
    bool was_free = true, any_owned = false;
    for (const JobProfile& j : problem.jobs) {
        if (problem.fixed.count(j.id)) continue;
        any_owned = true;
        auto p = problem.previous.find(j.id);
        was_free = was_free && p != problem.previous.end() && !p->second.gated;
    }
    char line[160];
    if (builder.cannot_collide()) {
        res.predicted_cost = builder.calm_free_cost();
        std::snprintf(line, sizeof line, "free %.4f%s; no collision possible; all free", res.predicted_cost,
                      was_free ? " (kept)" : "");
        res.explain = line;
        res.optimal = true;
        emit_decisions(Built{}, {}, problem, res, tuning_.slack_margin);
        res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return res;
    }
    Plans plans = builder.build();
    Built absorbing;   // searched only when the harmonic plan meets measuring jobs past the slack
    Searched absorbing_search;
    Built wide;   // searched only when the harmonic plan leaves owned jobs free and nothing is taken
    Searched wide_search;
    const double thr = opts_.change_threshold;
    SearchStats st;
    st.work_per_s = opts_.search_work_per_s;
    // The searches get 60% of the leaf's budget (90% when an absorbing or a
    // wide plan is searched too); building the plans is the rest.
    // A gated plan costs at least its stretch: when running free is already
    // cheaper than that (with the change threshold in the gated plan's
    // favour), the plan is not searched at all.
    const double free_score = plans.all_free_cost - (was_free ? thr : 0);
    auto worth = [&](const Built& b) { return stretch_only(b.sp) - thr < free_score; };
    Searched h;
    if (worth(plans.harmonic)) h = search_plan(plans.harmonic, tuning_, opts_.local_budget_s * 0.3, thr, &st, problem.previous);
    else h.calm = contention_free(plans.harmonic.sp);
    // Nothing can collide: nobody needs a gate.
    bool calm = h.calm && plans.harmonic.free_owned.empty();
    Searched d;
    // Drifting can only beat a collision-free harmonic plan by its smaller
    // stretch: not worth a second search.
    bool harmonic_clean = h.open && plans.harmonic.free_owned.empty() &&
                          h.sol.cost <= stretch_only(plans.harmonic.sp) + 1e-9;
    // Drifting is the way out for jobs that cannot share a hyperperiod: when
    // the harmonic plan gates every owned job, its cyclic prediction holds for
    // ever, while a drift plan only looks a horizon ahead and near-identical
    // jobs at periods of their own slide through each other after it.
    bool harmonic_places_all = h.open && plans.harmonic.free_owned.empty();
    if (!calm && any_owned && !harmonic_clean && !harmonic_places_all && worth(plans.drift))
        d = search_plan(plans.drift, tuning_, opts_.local_budget_s * 0.3, thr, &st, problem.previous);
    // Keeping last epoch's way of running counts the change threshold in its favour.
    const Built* chosen = nullptr;
    const Searched* won = nullptr;
    double best = free_score;
    res.predicted_cost = plans.all_free_cost;
    res.judged_cost = free_score;
    std::snprintf(line, sizeof line, "free %.4f%s", plans.all_free_cost, was_free ? " (kept)" : "");
    res.explain = line;
    std::string verdicts[2];
    const bool planned_here = !fixed_elsewhere(problem);
    const double take_margin = planned_here ? tuning_.take_margin : tuning_.slack_margin;
    // A plan is doubted past take_margin up to doubt_margin (leaves that
    // plan every gated job they see only). Its decisions carry the widest
    // share at which this leaf would still take it: the other leaves and the
    // coordinator hand a job over only where its owner would not keep it.
    const double doubt_margin = planned_here ? std::max(take_margin, tuning_.doubt_margin) : take_margin;
    if (!calm) {
        // A plan is taken when it beats the best so far, its collisions
        // counted `weight` times, and they fit the jobs' slack (or cost next
        // to nothing).
        auto judge = [&](const Built& b, const Searched& s, double weight, std::string& v,
                         double delay_scale = 1) -> Verdict {
            if (!s.open) {
                v = "not searched";
                return Verdict::NotSearched;
            }
            const double stretch = stretch_only(b.sp);
            std::snprintf(line, sizeof line, "%.4f (stretch %.4f%s)", s.sol.cost, stretch, s.kept ? ", kept" : "");
            v = line;
            SlackFit fit = s.sol.cost - stretch > tuning_.max_gated_residual
                               ? slack_fit(b.sp, s.sol.shift, take_margin, tuning_.replay_gate, delay_scale)
                               : SlackFit::Fits;
            if (fit != SlackFit::Fits) {
                if (doubt_margin > take_margin)
                    fit = slack_fit(b.sp, s.sol.shift, doubt_margin, tuning_.replay_gate, delay_scale);
                if (fit != SlackFit::Fits) {
                    v += fit == SlackFit::MissesSlots ? " rejected: collisions miss slots"
                                                      : " rejected: collisions exceed the slack";
                    return Verdict::PastSlack;
                }
                v += " doubted";
                weight = std::max(weight, tuning_.absorb_collision_weight);
            }
            const double waits = tuning_.charge_waits ? first_slot_charge(b, s.sol.shift, problem) : 0;
            if (waits > 0) {
                std::snprintf(line, sizeof line, " waits %.4f", waits);
                v += line;
            }
            const double score = stretch + weight * (s.sol.cost - stretch) - (s.kept ? thr : 0) + waits;
            if (score >= best - 1e-12) {
                v += " no better";
                return Verdict::NoBetter;
            }
            best = score;
            res.judged_cost = score;
            chosen = &b;
            won = &s;
            res.predicted_cost = s.sol.cost;
            return Verdict::Taken;
        };
        const Verdict hv = judge(plans.harmonic, h, 1.0, verdicts[0]);
        judge(plans.drift, d, 1.0, verdicts[1]);
        if (chosen == &plans.harmonic) verdicts[0] += " chosen";
        if (chosen == &plans.drift) verdicts[1] += " chosen";
        res.explain += "; harmonic " + verdicts[0] + "; drift " + verdicts[1];
        // Refused only for collisions with jobs that never hold: periods
        // long enough to absorb them may still beat running free. Or every
        // job holding, placed, and alone filling each link it loads: the
        // same, each delay counted absorb_collision_weight times for the
        // periods and their slack check alike (the slot grid shares a slot's
        // excess out once; two such rings both finish late by all of it).
        const bool refused = !chosen && hv == Verdict::PastSlack && tuning_.absorb_measuring;
        const bool measuring_only = refused && !plans.harmonic.holding_mix.empty() &&
            slack_fit(without_measuring(plans.harmonic), h.sol.shift, tuning_.slack_margin, tuning_.replay_gate) == SlackFit::Fits;
        const bool filling = refused && tuning_.absorb_holding && plans.harmonic.holding_mix.empty() &&
                             plans.harmonic.free_owned.empty() && rings_fill_links(plans.harmonic.sp);
        if (measuring_only || filling) {
            const double scale = measuring_only ? 1.0 : tuning_.absorb_collision_weight;
            absorbing = builder.harmonic_with_floors(
                absorbing_periods(plans.harmonic, h.sol.shift, problem.jobs.size(), tuning_.slack_margin, scale));
            std::string v = "not searched";
            if (worth(absorbing)) {
                absorbing_search = search_plan(absorbing, tuning_, opts_.local_budget_s * 0.3, thr, &st, problem.previous);
                if (judge(absorbing, absorbing_search, tuning_.absorb_collision_weight, v, scale) == Verdict::Taken)
                    v += " chosen";
            }
            res.explain += "; absorbing " + v;
        }
        // No common period within max_stretch for every owned job, the
        // harmonic plan searched (its stretch alone did not already lose to
        // running free) and nothing taken: periods within wide_stretch that
        // place more of the jobs, the stretch counted in full and the
        // collisions twice, may still beat running free (rings of one model
        // at paces of their own; doc/scale.md, "Stop 50"). The third search's share of the budget
        // goes to this plan or the absorbing one, never both.
        if (!chosen && h.open && !absorbing_search.open && !plans.harmonic.free_owned.empty() &&
            tuning_.wide_stretch > tuning_.max_stretch) {
            LocalTuning wider = tuning_;
            wider.max_stretch = tuning_.wide_stretch;
            wide = LeafBuilder(opts_, wider, topo, problem).harmonic_with_floors(std::vector<double>(problem.jobs.size(), 0));
            std::string v = "not searched";
            if (wide.free_owned.size() < plans.harmonic.free_owned.size() && worth(wide)) {
                wide_search = search_plan(wide, tuning_, opts_.local_budget_s * 0.3, thr, &st, problem.previous);
                if (judge(wide, wide_search, tuning_.absorb_collision_weight, v) == Verdict::Taken) v += " chosen";
            }
            res.explain += "; wide " + v;
        }
    } else {
        res.optimal = true;
        res.explain += "; no collision possible";
    }
    res.search_nodes = st.nodes;
    if (!chosen) res.explain += "; all free";
    if (won) res.optimal = won->sol.optimal;
    if (chosen) emit_decisions(*chosen, won->sol.shift, problem, res, doubt_margin);
    else emit_decisions(Built{}, {}, problem, res, tuning_.slack_margin);
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

LeafResult LocalScheduler::decide(const Topology& topo, const LeafProblem& problem) const {
    std::vector<JobId> measuring;   // owned here, hooks that never hold
    for (const JobProfile& j : problem.jobs)
        if (!j.holds && !problem.fixed.count(j.id)) measuring.push_back(j.id);
    if (measuring.empty()) return decide_plans(topo, problem);
    const auto t0 = std::chrono::steady_clock::now();
    // First every way of running them free, the others planned around them.
    LeafProblem around = problem;
    for (JobId id : measuring) {
        around.fixed[id] = JobDecision{};
        around.previous.erase(id);
    }
    LeafResult res = decide_plans(topo, around);
    for (JobId id : measuring) {
        JobDecision dec;
        dec.owner_leaf = problem.leaf;
        res.jobs[id] = dec;
        res.free_jobs++;
    }
    // One job at a time, on a leaf that plans every gated job it sees: two
    // free jobs also drift against each other until both lock, which each
    // one's lock points (against the others fixed) miss, and a job gated by
    // another leaf sits where that leaf planned it without this lock. Both
    // measured as losses without the rule (doc/scale.md, stop 28). A lock
    // already in place goes on beside them: those leaves planned around it,
    // and dropping it for their plans made two leaves take turns for ever
    // (doc/testbed.md, "A job that only measures").
    auto last = measuring.size() == 1 ? problem.previous.find(measuring[0]) : problem.previous.end();
    const bool locked = last != problem.previous.end() && last->second.gated;
    if (!tuning_.lock_measuring) {
    } else if (measuring.size() > 1) {
        res.explain += "; lock: more than one measuring job";
    } else if (fixed_elsewhere(problem) && !locked) {
        res.explain += "; lock: jobs gated by other leaves";
    } else {
        try_lock(topo, problem, measuring[0], res);
    }
    res.changed = changed_from(problem, res.jobs);
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

// The harmonic plan with the measuring job on the grid too, at the worst
// point it may lock to (lock_points.h), the gated jobs searched around it.
void LocalScheduler::try_lock(const Topology& topo, const LeafProblem& problem, JobId measuring,
                              LeafResult& res) const {
    const LeafBuilder builder(opts_, tuning_, topo, problem);
    const Built b = builder.harmonic_with_floors(std::vector<double>(problem.jobs.size(), 0));
    size_t m = b.sp.jobs.size();
    for (size_t k = 0; k < b.sp.jobs.size(); ++k)
        if (b.sp.jobs[k].id == measuring) m = k;
    if (m == b.sp.jobs.size()) {
        res.explain += "; lock: no common period";
        return;
    }
    // Its stretch alone must beat what was chosen (collisions only add).
    if (stretch_only(b.sp) - opts_.change_threshold >= res.predicted_cost) {
        res.explain += "; lock not searched";
        return;
    }
    SearchStats st;
    st.work_per_s = opts_.search_work_per_s;
    const double lead_s = b.sp.jobs[m].period_slots * b.sp.slot_s - b.sp.jobs[m].isolated_period_s;
    // The job where it will lock (the worst point it may come to rest), then,
    // for up to `rounds` - 1 rounds, the gated jobs searched again around
    // that point, until their delays fit their slack (the locked job's own
    // delay is its lead, by definition). Empty when it does not settle so.
    // `as_decided`: the slack also as the coordinator will measure the plan
    // (past_slack_as_decided). Not for last epoch's lock kept as it stands:
    // that view's window starts now, its figure moves from epoch to epoch,
    // and a kept lock so checked was dropped and taken again by turns, each
    // time moving the jobs (doc/scale.md, "Stop 49").
    auto settle = [&](std::vector<int>& shift, int rounds, bool as_decided = true) -> std::string {
        SlotProblem around = b.sp;
        std::string why;
        for (int round = 0; round < rounds; ++round) {
            around.jobs[m].fixed_shift = -1;
            const std::vector<int> points = lock_points(delay_by_shift(around, shift, m), lead_s);
            if (points.empty()) return "job " + std::to_string(measuring) + " never settles";
            double worst_cost = -1;
            int worst = points[0];
            for (int x : points) {
                shift[m] = x;
                if (const double c = predicted_cost(around, shift); c > worst_cost) {
                    worst_cost = c;
                    worst = x;
                }
            }
            shift[m] = worst;
            why.clear();
            const std::vector<double> delay = collision_delays_s(around, shift);
            for (size_t k = 0; k < around.jobs.size() && why.empty(); ++k) {
                const SlotJob& j = around.jobs[k];
                if (k != m && j.isolated_period_s > 0 &&
                    delay[k] > tuning_.slack_margin * (j.period_slots * around.slot_s - j.isolated_period_s) + 1e-12)
                    why = "job " + std::to_string(j.id) + " past its slack";
            }
            if (why.empty() && as_decided) why = past_slack_as_decided(*this, topo, problem, b, shift, measuring);
            if (why.empty() || round + 1 == rounds) break;
            around.jobs[m].fixed_shift = shift[m];
            shift = search(around, tuning_, opts_.local_budget_s * 0.1, &shift, &st).shift;
        }
        return why;
    };
    // Judged as the other plans are, with the gated jobs' first waits: a
    // lock plan whose waits the jobs cannot recover took over from the plan
    // (or running free) that had been judged better for them.
    const double stretch = stretch_only(b.sp);
    auto score = [&](const std::vector<int>& shift) {
        const double waits = tuning_.charge_waits ? first_slot_charge(b, shift, problem, m) : 0;
        return stretch + tuning_.absorb_collision_weight * (predicted_cost(b.sp, shift) - stretch) + waits;
    };
    std::vector<int> shift = search_plan(b, tuning_, opts_.local_budget_s * 0.3, opts_.change_threshold, &st, problem.previous).sol.shift;
    std::string why = settle(shift, kLockRounds);
    // Last epoch's lock plan, still settling as it stands, stays unless the
    // new one is better by the change threshold: re-searched every epoch,
    // plans of equal cost would move the running jobs for nothing.
    bool kept = false;
    std::vector<int> previous = b.warm;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k)
        if (b.sp.jobs[k].fixed_shift >= 0) previous[k] = b.sp.jobs[k].fixed_shift;
    auto p = problem.previous.find(measuring);
    const bool was_locked = p != problem.previous.end() && p->second.gated &&
                            std::all_of(previous.begin(), previous.end(), [](int x) { return x >= 0; });
    if (was_locked && settle(previous, 1, false).empty() &&
        (!why.empty() || score(shift) >= score(previous) - opts_.change_threshold)) {
        shift = previous;
        why.clear();
        kept = true;
    }
    res.search_nodes += st.nodes;
    if (!why.empty()) {
        res.explain += "; lock: " + why;
        return;
    }
    // Judged like the absorbing plan: collisions with a job nobody holds count twice.
    const double cost = predicted_cost(b.sp, shift);
    char line[128];
    std::snprintf(line, sizeof line, "; lock %.4f (stretch %.4f%s)", cost, stretch, kept ? ", kept" : "");
    res.explain += line;
    if (const double waits = tuning_.charge_waits ? first_slot_charge(b, shift, problem, m) : 0; waits > 0) {
        std::snprintf(line, sizeof line, " waits %.4f", waits);
        res.explain += line;
    }
    if (score(shift) - (kept ? opts_.change_threshold : 0) >= res.judged_cost - 1e-12) {
        res.explain += " no better";
        return;
    }
    res.explain += " chosen";
    res.jobs.clear();
    res.free_jobs = 0;
    res.predicted_cost = cost;
    res.optimal = false;
    emit_decisions(b, shift, problem, res, tuning_.slack_margin);
}

std::map<JobId, double> LocalScheduler::collision_delays(const Topology& topo, const LeafProblem& problem) const {
    const Built b = LeafBuilder(opts_, tuning_, topo, problem).decided();
    const std::vector<double> delay = collision_delays_s(b.sp, b.warm);
    std::map<JobId, double> out;
    for (size_t k = 0; k < b.sp.jobs.size(); ++k) out[problem.jobs[b.job_of[k]].id] = delay[k];
    return out;
}

}  // namespace harmonics
