// coordd's decisions on cross-leaf jobs: owners, conflicts past a job's
// slack on leaves that own neither job, adoption of free jobs, and the phase
// families it places itself (the policy code is shared with the simulator:
// policy/coordination_epoch.cpp, policy/phase_groups.cpp).
#include "coordd.h"

#include <algorithm>
#include <cmath>

#include "config/policy_options.h"
#include "policy/global_coordinator.h"
#include "policy/harmonics_local.h"
#include "policy/phase_groups.h"
#include "sched/job_profile.h"
#include "state/leaf_summary.h"
#include "topology/hostlist.h"
#include "util/clock.h"
#include "util/log.h"
#include "wire/schedule_msg.h"

namespace harmonics::coord {

// Each owner's slack rule covers its own leaf only. A gated cross-leaf job
// whose collisions with other gated jobs on another of its leaves take more
// than the share of its slack its plan allows would miss slots there for
// good. The first time, that leaf becomes its owner and plans it around the
// jobs fixed there; if it happens again, every leaf runs it free for a while
// (the simulator's Global Coordinator applies the same rule within one epoch,
// policy/global_coordinator.cpp).
void Coordd::check_slack(const std::vector<JobId>& ids) {
    const LocalTuning tuning;
    const double now = mono_s();
    struct Over {
        double used;
        JobId id;
        std::string leaf;
    };
    std::vector<Over> over;
    for (JobId id : ids) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) continue;
        CoordJob& j = it->second;
        if (j.ended || runs_free(j) || grouped(j) || j.leaves.size() < 2 || !j.decision || !j.decision->gated) continue;
        Over o{0, id, ""};
        for (const auto& [leaf, v] : j.views)
            if (v.slack_used > o.used && (leaf == j.owner || !owner_sees_all(leaf, j.owner)))
                o = {v.slack_used, id, leaf};
        if (past_margin(tuning, *j.decision, o.used)) over.push_back(o);
    }
    // The job its collisions cost most first; after each hand-over or free
    // run, the leaves it touches are unsettled for a few epochs, so two jobs
    // meeting on a leaf get one hand-over (handing over both would move
    // their conflict to the leaves they came from).
    std::sort(over.begin(), over.end(), [](const Over& a, const Over& b) { return a.used > b.used; });
    for (const Over& o : over) {
        CoordJob& j = jobs_.at(o.id);
        if (!settled(j)) continue;
        // A guest gated on that leaf leaves first: it ran free before it was
        // adopted, and the jobs it now meets were not in conflict.
        if (CoordJob* g = guest_on(o.leaf, j)) {
            if (!settled(*g)) continue;
            const double hold = conflict_free_hold_s(kConflictFreeHoldEpochs * cfg_.epoch_s, g->run_free_times++);
            g->run_free = true;
            g->run_free_until = now + hold;
            settle_slack(*g);
            HLOG_INFO("job %lld: collisions on leaf %s take %.0f%% of its slack; job %lld, adopted by %s and gated "
                      "there, runs free on every leaf for %.0f s",
                      (long long)o.id, o.leaf.c_str(), 100 * o.used, (long long)g->id, g->owner.c_str(), hold);
            notify_leaves(*g);
            continue;
        }
        if (!j.reowned && o.leaf != j.owner) {
            HLOG_INFO("job %lld: collisions on leaf %s take %.0f%% of its slack (owner %s plans its own leaf); "
                      "%s owns it now",
                      (long long)o.id, o.leaf.c_str(), 100 * o.used, j.owner.c_str(), o.leaf.c_str());
            j.owner = o.leaf;
            j.reowned = true;
            settle_slack(j);
            notify_leaves(j);
            continue;
        }
        const double hold = conflict_free_hold_s(kConflictFreeHoldEpochs * cfg_.epoch_s, j.run_free_times++);
        j.run_free = true;
        j.run_free_until = now + hold;
        settle_slack(j);
        HLOG_INFO("job %lld: collisions on leaf %s take %.0f%% of its slack (owner %s plans its own leaf); "
                  "it runs free on every leaf for %.0f s",
                  (long long)o.id, o.leaf.c_str(), 100 * o.used, j.owner.c_str(), hold);
        notify_leaves(j);
    }
}

// Whether every cross-leaf job running on `leaf` also crosses `owner`'s
// leaf, whose links are no wider: the owner then planned every collision
// there, and the leaf's report differs from the owner's own view only by
// measurement noise (four rings across two leaves: rack2 reported 106 % of
// a ring's slack where rack1, planning the same rings, predicted under 90 %,
// and the hand-over left the ring free; doc/testbed.md, "Four rings, all
// holding"). The simulator's Global Coordinator applies the same rule
// (CoordinationEpoch::owner_sees_all).
bool Coordd::owner_sees_all(const std::string& leaf, const std::string& owner) const {
    const SwitchId l = topo_.find_switch(leaf), o = topo_.find_switch(owner);
    if (l < 0 || o < 0 || !links_as_wide(topo_, l, o)) return false;
    for (const auto& [id, k] : jobs_)
        if (!k.ended && k.leaves.size() > 1 && k.leaves.count(leaf) && !k.leaves.count(owner)) return false;
    return true;
}

// The guest to send away for a conflict of `victim` on `leaf`: the victim
// itself when it is one, else the adopted gated job loading the leaf most.
CoordJob* Coordd::guest_on(const std::string& leaf, CoordJob& victim) {
    if (victim.adopted) return &victim;
    CoordJob* g = nullptr;
    double most = -1;
    for (auto& [id, k] : jobs_) {
        if (!k.adopted || k.ended || runs_free(k) || !k.decision || !k.decision->gated || !k.leaves.count(leaf)) continue;
        auto v = k.views.find(leaf);
        const double load = v != k.views.end() ? v->second.uplink_load : 0;
        if (load > most) {
            most = load;
            g = &k;
        }
    }
    return g;
}

// A leaf asks for a free cross-leaf job whose collisions there take its
// gated jobs past their slack: its owner left it free because gating it did
// not pay on the owner's own leaf, but the leaf asking can plan it among the
// jobs it meets. It becomes the owner, once per job; if the job, gated
// there, collides past slack anywhere, it is the one that runs free
// (check_slack). The simulator's Global Coordinator adopts the same way,
// policy/coordination_epoch.cpp. Epochs run on each leaf's own clock: a job
// is adopted only once its owner has left it free for kFreeEpochs of its own
// decisions (at start-up an owner may not have gated its jobs yet when a
// neighbour already has).
void Coordd::check_adopt(const std::vector<JobId>& ids) {
    constexpr std::uint64_t kFreeEpochs = 4;
    const double now = mono_s();
    for (JobId id : ids) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) continue;
        CoordJob& j = it->second;
        // One its owner runs free for outrunning its period would only miss
        // its slots on the leaf adopting it too (as in the simulator, where
        // a held job is not adopted).
        if (j.ended || runs_free(j) || outran(j, now) || j.reowned || grouped(j) || j.leaves.size() < 2 ||
            !j.decision || j.decision->gated || !settled(j))
            continue;
        auto owner = leaves_.find(j.owner);
        if (owner == leaves_.end() || owner->second.epoch < j.decision_epoch + kFreeEpochs) continue;
        for (const auto& [leaf, v] : j.views) {
            if (!v.adopt || leaf == j.owner) continue;
            HLOG_INFO("job %lld: runs free (owner %s) and takes gated jobs on leaf %s past their slack; "
                      "%s owns it now (adopted)",
                      (long long)id, j.owner.c_str(), leaf.c_str(), leaf.c_str());
            j.owner = leaf;
            j.reowned = true;
            j.adopted = true;
            settle_slack(j);
            notify_leaves(j);
            break;
        }
    }
}

// After a hand-over or a change to or from running free, each of the job's
// leaves needs a few decisions (the news, the new owner's decision, its own
// plan around it) before its reports describe the new state: until then
// its reports are ignored and no job crossing it is acted on.
void Coordd::settle_slack(CoordJob& j) {
    constexpr std::uint64_t kSettleEpochs = 4;
    for (const std::string& leaf : j.leaves) {
        auto l = leaves_.find(leaf);
        slack_from_epoch_[leaf] = (l != leaves_.end() ? l->second.epoch : 0) + kSettleEpochs;
    }
    for (auto& [id, k] : jobs_)
        for (auto& [leaf, v] : k.views)
            if (!leaf_settled(leaf)) {
                v.slack_used = 0;
                v.adopt = false;
            }
}

bool Coordd::leaf_settled(const std::string& leaf) const {
    auto from = slack_from_epoch_.find(leaf);
    auto l = leaves_.find(leaf);
    return from == slack_from_epoch_.end() || (l != leaves_.end() && l->second.epoch >= from->second);
}

bool Coordd::settled(const CoordJob& j) const {
    return std::all_of(j.leaves.begin(), j.leaves.end(), [this](const std::string& l) { return leaf_settled(l); });
}

void Coordd::end_run_free(double now) {
    for (auto& [id, j] : jobs_) {
        if (!j.run_free || j.ended || now < j.run_free_until) continue;
        j.run_free = false;
        settle_slack(j);
        if (j.holds) HLOG_INFO("job %lld: its owner %s may gate it again", (long long)id, j.owner.c_str());
        notify_leaves(j);
    }
}

// The job as the policy code sees it, from the leaf whose measured period is
// the rank-weighted median over its leaves (sched::median_leaf); false when
// none has measured its period and phases yet.
bool Coordd::profile_of(const CoordJob& j, JobProfile* p, double* natural_s) const {
    std::vector<sched::LeafSummary> leaves;
    for (auto& [leaf, v] : j.views) leaves.push_back({v.ranks, v.period_s, &v.phases});
    sched::JobSummary sum;
    if (auto k = sched::median_leaf(leaves)) {
        sum.period_s = leaves[*k].period_s;
        sum.phases = *leaves[*k].phases;
    }
    std::vector<SwitchId> lv;
    for (const std::string& n : j.leaves)
        if (SwitchId s = topo_.find_switch(n); s >= 0) lv.push_back(s);
    // Where its bursts stand: the latest iteration start any leaf saw.
    for (const auto& [leaf, v] : j.views) sum.last_collective_s = std::max(sum.last_collective_s, v.iteration_start_s);
    *p = sched::build_profile(topo_, j.id, j.nodes, lv, sum);
    // Slurm's end (0: unknown or no limit), as the schedds have it: what
    // running free is weighed over is no longer than the time it has left.
    p->end_s = j.end_time_s;
    if (natural_s) *natural_s = sched::natural_period_s(sum);
    return sum.period_s > 0 && !sum.phases.empty();
}

// A family member still more than kFamilyOutrunTolerance past the family's
// period, net of the gate's holds, after kFamilyOutrunS, or one more than
// kFamilyFarOutrunTolerance past it after the plain count (policy/outrun.h; the
// simulator's CoordinationEpoch::free_outrunning does the same): it misses
// its slots for good. Out of families for a hold, and free as long:
// the hold travels to its leaves as JobInfo.outran_for_s, as an owner's own
// outrun hold does, so the owner it goes back to plans it free. Off with
// FreeOutrunning=no, as the owners' rule.
bool Coordd::leaves_family_outrun(CoordJob& j, double natural_s, double now) {
    const bool watched = cfg_.free_outrunning && grouped(j) && j.decision && j.decision->gated;
    const JobDecision d = watched ? *j.decision : JobDecision{};
    const double floor_s = family_outrun_floor_s(natural_s, d);
    if (!family_outrun_.seen(j.id, d, outruns(natural_s, d, kFamilyOutrunTolerance), now, floor_s)) return false;
    // Doubled each further time the job had to run free, as the
    // simulator's coordinator does (CoordinationEpoch::free_outrunning):
    // joining a family again does not clear it.
    const double hold_s = conflict_free_hold_s(kConflictFreeHoldEpochs * cfg_.epoch_s, j.run_free_times++);
    group_refused_.hold(j.id, now + hold_s);
    j.outran_until = now + hold_s;
    HLOG_INFO("job %lld: in its phase family at period %.4f s it iterated at %.4f s (net of the gate's holds) for "
              "%.0f s: it misses its slots; out of families and free for %.0f s",
              (long long)j.id, d.period_s, natural_s, std::max(floor_s, kOutrunIterations * d.period_s), hold_s);
    return true;
}

bool Coordd::grouped(const CoordJob& j) const { return j.owner == wire::kCoordinatorOwner; }

// Owners for cross-leaf jobs that have none. An owner is kept while the job
// runs: moving it would make the job's shift jump for no gain.
void Coordd::assign_owners() {
    owners_stale_ = false;
    std::vector<JobProfile> profiles;
    std::vector<JobId> need;
    for (auto& [id, j] : jobs_) {
        if (j.ended || j.leaves.size() < 2) continue;
        profiles.emplace_back();
        profile_of(j, &profiles.back());
        if (j.owner.empty()) need.push_back(id);
    }
    if (need.empty()) return;
    std::map<JobId, SwitchId> owners = GlobalCoordinator(cfg_.coord_rounds).assign_owners(topo_, profiles);
    for (JobId id : need) {
        CoordJob& j = jobs_[id];
        auto o = owners.find(id);
        if (o != owners.end() && o->second >= 0)
            j.owner = topo_.sw(o->second).name;
        else
            j.owner = *j.leaves.begin();
        HLOG_INFO("job %lld spans %zu leaves; owner %s", (long long)id, j.leaves.size(), j.owner.c_str());
        notify_leaves(j);
    }
}

// After a start (a restart above all) the schedds hand back, as they
// register, the families the previous coordd placed. A plan made before all
// of them did sees only part of a family, dissolves it and hands its members
// back to owners (a restart under load did: the fourth of four schedds
// registered 2 ms after a tick). So families are planned once every leaf
// with a schedd (a Schedd= line; every leaf where none has one) has
// registered, or once a schedd's longest wait between retries has passed
// since the start; meanwhile the schedds keep the last decisions.
bool Coordd::registrations_settled() {
    if (registrations_settled_) return true;
    bool any_configured = false;
    std::vector<std::string> missing, missing_configured;   // leaves not heard of since the start
    for (SwitchId s : topo_.leaves()) {
        const std::string& name = topo_.sw(s).name;
        const bool configured = !schedd_address(cfg_, topo_, s).empty();
        any_configured |= configured;
        auto it = leaves_.find(name);
        if (it != leaves_.end() && it->second.last_seen > 0) continue;
        missing.push_back(name);
        if (configured) missing_configured.push_back(name);
    }
    if (any_configured) missing.swap(missing_configured);
    const double waited = mono_s() - started_, grace = coordd_retry_max_s(cfg_) + cfg_.epoch_s;
    if (!missing.empty() && waited < grace) return false;
    if (!missing.empty())
        HLOG_INFO("planning phase families without %s %s: no schedd registered within %.1f s of the start",
                  missing.size() == 1 ? "leaf" : "leaves", compress_hostlist(missing).c_str(), grace);
    registrations_settled_ = true;
    return true;
}

// Phase groups (policy/phase_groups.h, the simulator's Global Coordinator
// runs the same plan): cross-leaf jobs that can share one period are placed
// by coordd itself, each in a window of it, so that on every leaf the rings
// of one window fit the uplink together. A member's decision is fixed on
// every leaf it crosses (owner "(coordinator)"); one that leaves its family
// (it ended, or its measured period no longer fits) goes back to an owner leaf.
void Coordd::plan_groups() {
    if (!cfg_.phase_groups || cfg_.policy != "harmonics") {
        groups_stale_ = false;
        return;
    }
    if (!registrations_settled()) return;   // groups_stale_ stays: the plan comes once they have
    groups_stale_ = false;
    if (owners_stale_) assign_owners();   // a family is for jobs of several owners: every member has one
    const double now = mono_s();
    std::vector<JobProfile> profiles;
    std::vector<size_t> eligible;
    std::map<JobId, JobDecision> previous;
    std::map<JobId, SwitchId> owners;
    std::set<JobId> present;
    for (auto& [id, j] : jobs_) {
        if (j.ended || j.leaves.size() < 2 || !j.holds) continue;
        JobProfile p;
        double natural_s = 0;
        if (!profile_of(j, &p, &natural_s)) continue;   // nothing measured yet
        present.insert(id);
        if (grouped(j) && j.decision && !leaves_family_outrun(j, natural_s, now)) previous[id] = *j.decision;
        owners[id] = topo_.find_switch(j.owner);
        if (!group_refused_.held(id, now)) eligible.push_back(profiles.size());
        profiles.push_back(std::move(p));
    }
    family_outrun_.forget_all_but(present);
    if (eligible.empty() && previous.empty()) return;
    const PolicyOptions po = policy_options(cfg_);
    const PhaseGroupPlan plan =
        plan_phase_groups(topo_, profiles, eligible, previous, owners, phase_group_options(po, local_tuning(po)), wall_s());
    double hold = 0;
    for (JobId id : plan.refused) hold = std::max(hold, group_refused_.refuse(id, now, kConflictFreeHoldEpochs * cfg_.epoch_s));
    if (!plan.refused.empty())
        HLOG_INFO("%zu jobs of refused phase families are held out of new families for up to %.0f s", plan.refused.size(),
                  hold);
    HLOG_DEBUG("phase groups: %zu cross-leaf jobs measured, %zu eligible, %zu in families before; %s", profiles.size(),
               eligible.size(), previous.size(), plan.explain.empty() ? "no family" : plan.explain.c_str());
    bool changed = false, left = false;
    for (const JobProfile& p : profiles) {
        CoordJob& j = jobs_.at(p.id);
        auto d = plan.jobs.find(p.id);
        if (d == plan.jobs.end()) {
            if (!grouped(j)) continue;
            HLOG_INFO("job %lld leaves its phase family; an owner leaf decides it again", (long long)p.id);
            j.owner.clear();
            j.decision.reset();
            left = true;
            continue;
        }
        group_refused_.forget(p.id);   // in a family: a later refusal starts from the first hold
        // (groups too: a free rider's window count is its mark for the next plan.)
        if (grouped(j) && j.decision && same_gate(*j.decision, d->second) && j.decision->group == d->second.group &&
            j.decision->groups == d->second.groups)
            continue;
        if (!grouped(j) && d->second.gated)
            HLOG_INFO("job %lld joins a phase family: window %d of %d of %.4f s (owner %s no longer decides it)",
                      (long long)p.id, d->second.group, d->second.groups, d->second.period_s,
                      j.owner.empty() ? "-" : j.owner.c_str());
        else if (!d->second.gated)
            HLOG_INFO("job %lld runs free beside a phase family: its rings fit every window on all its leaves "
                      "(owner %s no longer decides it)",
                      (long long)p.id, j.owner.empty() ? "-" : j.owner.c_str());
        else if (j.decision && j.decision->gated && j.decision->group == d->second.group &&
                 j.decision->groups == d->second.groups && std::fabs(j.decision->period_s - d->second.period_s) < 1e-9)
            HLOG_INFO("job %lld moves in its phase family: window %d of %d of %.4f s as before, from the new origin "
                      "of its family planned anew",
                      (long long)p.id, d->second.group, d->second.groups, d->second.period_s);
        else if (j.decision && j.decision->gated)   // a family planned again, or one that took a longer period
            HLOG_INFO("job %lld moves in its phase family: window %d of %d of %.4f s (it was in window %d of %d of %.4f s)",
                      (long long)p.id, d->second.group, d->second.groups, d->second.period_s, j.decision->group,
                      j.decision->groups, j.decision->period_s);
        else
            HLOG_INFO("job %lld is gated in its phase family now: window %d of %d of %.4f s (it ran free beside it)",
                      (long long)p.id, d->second.group, d->second.groups, d->second.period_s);
        if (!changed) ++group_plans_;
        changed = true;
        j.owner = wire::kCoordinatorOwner;
        j.decision = d->second;
        j.decision_epoch = group_plans_;
        j.run_free = false;
        notify_leaves(j);
        comment_soon();
    }
    if (changed || !plan.refused.empty())
        for (std::size_t a = 0, b; a < plan.explain.size(); a = b + 1) {
            b = plan.explain.find('\n', a);
            if (b == std::string::npos) b = plan.explain.size();
            HLOG_INFO("%s", plan.explain.substr(a, b - a).c_str());
        }
    if (left) assign_owners();
}

}  // namespace harmonics::coord
