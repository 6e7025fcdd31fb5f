#include "policy/coordination_epoch.h"

#include <algorithm>
#include <chrono>

namespace harmonics {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool same_decision(const JobDecision& a, const JobDecision& b) {
    return a.gated == b.gated && a.shift_s == b.shift_s && a.period_s == b.period_s && a.origin_s == b.origin_s;
}

}  // namespace

// A job whose ranks do not hold their collectives keeps no slot of its own:
// its owner runs it free or plans the phase it will lock to
// (LocalTuning::lock_measuring), every other leaf plans around that, and no
// family, hand-over or adoption takes it (as coordd and schedd).
CoordinationEpoch::CoordinationEpoch(const Topology& topo, const std::vector<JobProfile>& jobs,
                                     const std::map<JobId, JobDecision>& previous, const LocalScheduler& local,
                                     double now_s, int max_rounds, std::map<JobId, SwitchId> owners)
    : topo_(topo), jobs_(jobs), local_(local), now_s_(now_s), max_rounds_(max_rounds),
      loads_(leaf_loads(topo, jobs, leaf_of_links(topo))), current_(previous) {
    res_.owners = std::move(owners);
    for (size_t i = 0; i < jobs.size(); ++i) {
        for (const auto& [leaf, x] : loads_[i].per_leaf) {
            (void)x;
            members_[leaf].push_back(i);
        }
    }
}

void CoordinationEpoch::recall(ConflictMemory& memory) {
    std::set<JobId> present;
    for (const JobProfile& j : jobs_) present.insert(j.id);
    forget_departed(memory.owner, present);
    forget_departed(memory.adopted, present);
    forget_departed(memory.free_until_s, present);
    forget_departed(memory.free_times, present);
    memory.group_refused.forget_all_but(present);
    for (size_t i = 0; i < jobs_.size(); ++i) {
        auto o = res_.owners.find(jobs_[i].id);
        auto m = o == res_.owners.end() ? memory.owner.end() : memory.owner.find(jobs_[i].id);
        if (m != memory.owner.end())
            for (const auto& [leaf, x] : loads_[i].per_leaf) {
                (void)x;
                if (leaf == m->second) {
                    o->second = leaf;
                    reowned_.insert(jobs_[i].id);
                    if (memory.adopted.count(jobs_[i].id)) adopted_.insert(jobs_[i].id);
                }
            }
        // Held free: a cross-leaf job for a conflict, any job for outrunning
        // its period (free_outrunning).
        auto f = memory.free_until_s.find(jobs_[i].id);
        const SwitchId leaf = decider(i);
        if (f != memory.free_until_s.end() && now_s_ < f->second && leaf >= 0) ungate(jobs_[i].id, leaf);
    }
}

// The leaf that decides job i: a cross-leaf job's owner, else the one leaf
// whose links it loads (-1 when it loads none).
SwitchId CoordinationEpoch::decider(size_t i) const {
    auto o = res_.owners.find(jobs_[i].id);
    if (o != res_.owners.end()) return o->second;
    return loads_[i].per_leaf.empty() ? -1 : loads_[i].per_leaf.front().first;
}

// A gated job whose iterations keep running past its period misses its slot
// and is held to the next one, again and again: on two unrelated models
// sharing leaves (vgg16 and resnet50, 128 nodes) a vgg16 ring gated at 169
// ms iterated at 184 ms for its whole life and ran at 251 ms where fair
// sharing gave it 200 ms. Free, it runs at its own pace. harmonics-schedd
// applies the same rule to the jobs its leaf decides. Phase-family
// members are the coordinator's own plan and stay: on one model over 1,024
// nodes dozens of them run 3-15 % past their period for several epochs
// after a family is made and still gain from the gate (its late allowance
// lets them go at once); freeing them cost 2-5 points (doc/scale.md,
// "Stop 36"). Only one still 5 % past it after 30 s leaves, or one 25 %
// past it as soon as a job outside families would (outrun.h).
void CoordinationEpoch::free_outrunning(ConflictMemory& memory) {
    const double tolerance = local_.tuning().keep_tolerance;   // the hooks' noise plans ride out
    std::set<JobId> present;
    for (size_t i = 0; i < jobs_.size(); ++i) {
        const JobProfile& j = jobs_[i];
        present.insert(j.id);
        auto c = current_.find(j.id);
        const bool member = memory.grouped.count(j.id) > 0;
        const bool watched = c != current_.end() && c->second.gated && j.holds &&
                             (member ? res_.owners.count(j.id) > 0 : !ungated_.count(j.id) && decider(i) >= 0);
        const JobDecision d = watched ? c->second : JobDecision{};
        if (!memory.outrun.seen(j.id, d, outruns(j.measured_period_s, d, member ? kFamilyOutrunTolerance : tolerance),
                                now_s_, member ? family_outrun_floor_s(j.measured_period_s, d) : 0))
            continue;
        // It runs free for a hold doubled each further time it had to (a
        // member leaves families as long). A member's count is not cleared
        // when it joins again: one that misses every slot of each family it
        // joins would otherwise miss them again for a few epochs after every
        // hold, for its whole life.
        const double hold_s = conflict_free_hold_s(memory.free_hold_s, memory.free_times[j.id]++);
        if (member) memory.group_refused.hold(j.id, now_s_ + hold_s);
        memory.free_until_s[j.id] = now_s_ + hold_s;
        ungate(j.id, decider(i));
    }
    memory.outrun.forget_all_but(present);
}

// The coordinator's own plan for the cross-leaf jobs that can share a
// period: their decisions are fixed on every leaf, the owner's too, and no
// conflict pass moves them (the families were planned on all their leaves).
// A job the owners had held free joins too: its hold was about the owners'
// conflicts.
void CoordinationEpoch::group_phases(const PhaseGroupOptions& opts, ConflictMemory* memory) {
    std::vector<size_t> eligible;
    for (size_t i = 0; i < jobs_.size(); ++i) {
        if (!res_.owners.count(jobs_[i].id)) continue;
        if (memory && memory->group_refused.held(jobs_[i].id, now_s_)) continue;
        if (!jobs_[i].holds) continue;
        eligible.push_back(i);
    }
    PhaseGroupPlan plan = plan_phase_groups(topo_, jobs_, eligible, current_, res_.owners, opts, now_s_);
    if (memory)
        for (JobId id : plan.refused) memory->group_refused.refuse(id, now_s_, memory->free_hold_s);
    for (auto& [id, d] : plan.jobs) {
        current_[id] = d;
        grouped_.insert(id);
        ungated_.erase(id);
        if (memory) {
            memory->free_until_s.erase(id);
            memory->group_refused.forget(id);
        }
    }
    if (memory) memory->grouped = grouped_;
    res_.grouped = static_cast<int>(grouped_.size());
    res_.families = static_cast<int>(plan.families.size());
    for (const PhaseFamily& f : plan.families) res_.overloaded += f.dirty;
    res_.refused = static_cast<int>(plan.refused.size());
    res_.groups_explain = std::move(plan.explain);
}

std::set<SwitchId> CoordinationEpoch::all_leaves() const {
    std::set<SwitchId> all;
    for (const auto& [leaf, m] : members_) all.insert(leaf);
    return all;
}

std::set<SwitchId> CoordinationEpoch::leaves_of(const std::set<JobId>& ids, bool with_owner) const {
    std::set<SwitchId> out;
    for (size_t i = 0; i < jobs_.size(); ++i) {
        if (!ids.count(jobs_[i].id)) continue;
        const SwitchId owner = res_.owners.at(jobs_[i].id);
        for (const auto& [leaf, x] : loads_[i].per_leaf) {
            (void)x;
            if (with_owner || leaf != owner) out.insert(leaf);
        }
    }
    return out;
}

// A leaf's problem: the jobs it owns with their latest decisions as warm
// start, the others' cross-leaf jobs fixed at theirs (free while undecided),
// jobs taken off the gate free everywhere.
LeafProblem CoordinationEpoch::problem(SwitchId leaf) const {
    LeafProblem pb;
    pb.leaf = leaf;
    pb.now_s = now_s_;
    for (size_t i : members_.at(leaf)) {
        const JobProfile& j = jobs_[i];
        pb.jobs.push_back(j);
        auto o = res_.owners.find(j.id);
        if (grouped_.count(j.id)) {
            pb.fixed[j.id] = current_.at(j.id);
        } else if (ungated_.count(j.id)) {
            pb.fixed[j.id] = JobDecision{};
        } else if (o != res_.owners.end() && o->second != leaf) {
            auto c = current_.find(j.id);
            pb.fixed[j.id] = c != current_.end() ? c->second : JobDecision{};
        } else if (auto p = current_.find(j.id); p != current_.end()) {
            pb.previous[j.id] = p->second;
        }
    }
    return pb;
}

// Rounds of leaf decisions from `dirty` until no owner's decision moves, at
// most max_rounds_: after each, owners' decisions go to the other leaves, and
// those whose fixed jobs moved decide again.
void CoordinationEpoch::rounds(std::set<SwitchId> dirty) {
    for (int round = 0; !dirty.empty() && round < max_rounds_; ++round) {
        res_.rounds++;
        double slowest = 0;
        for (SwitchId leaf : dirty) {
            LeafResult r = local_.decide(topo_, problem(leaf));
            slowest = std::max(slowest, r.wall_s);
            leaf_total_s_ += r.wall_s;
            results_[leaf] = std::move(r);
        }
        res_.slowest_leaf_s += slowest;
        std::set<JobId> moved;
        for (SwitchId leaf : dirty)
            for (const auto& [id, d] : results_[leaf].jobs) {
                auto c = current_.find(id);
                bool same = c != current_.end() && same_decision(c->second, d);
                current_[id] = d;
                if (!same && res_.owners.count(id)) moved.insert(id);
            }
        res_.unsettled = static_cast<int>(moved.size());
        dirty = leaves_of(moved, false);
    }
    if (dirty.empty()) res_.unsettled = 0;
}

// An owner's slack rule covers the collisions on its own leaf; a cross-leaf
// job also meets gated jobs of other owners on the other leaves it crosses,
// where both are fixed and nobody planned them, and once those collisions
// take more than its slack it misses slots for good (a sweep of one model
// scattered over 1,024 nodes ran 7.45 % slower than fair sharing). Such a job
// goes to the leaf where it collides, which plans it around the jobs fixed
// there; if it collides past its slack again, it runs free. The worst leaf
// counts, not the sum (the same rings collide at the same time on all their
// leaves and are slowed once), and only gated jobs (a free job's collisions
// are what the release rule's tolerance absorbs): both measured, doc/policies.md.
// One number per job and leaf is also what schedd reports to coordd.
bool CoordinationEpoch::resolve_conflicts(ConflictMemory* memory, bool last_pass) {
    std::map<JobId, std::pair<double, SwitchId>> worst;   // per job: its worst leaf's delay per iteration, that leaf
    double slowest = 0;
    for (const auto& m : members_) {
        const SwitchId leaf = m.first;
        bool crossing = false;
        LeafProblem pb = gated_only(leaf, &crossing);
        if (!crossing) continue;
        const auto t0 = Clock::now();
        std::map<SwitchId, bool> sees_all;   // per owner of a job here, owner_sees_all(leaf, owner), once
        for (const auto& [id, x] : local_.collision_delays(topo_, pb)) {
            auto o = res_.owners.find(id);
            if (o != res_.owners.end() && o->second != leaf) {
                auto [s, fresh] = sees_all.try_emplace(o->second, false);
                if (fresh) s->second = owner_sees_all(leaf, o->second);
                if (s->second) continue;
            }
            if (x > worst[id].first) worst[id] = {x, leaf};
        }
        slowest = std::max(slowest, since(t0));
        leaf_total_s_ += since(t0);
    }
    res_.slowest_leaf_s += slowest;
    std::map<JobId, double> over;   // job -> share of its slack its worst leaf takes
    for (const JobProfile& j : jobs_) {
        auto c = current_.find(j.id);
        if (!res_.owners.count(j.id) || ungated_.count(j.id) || grouped_.count(j.id) || c == current_.end() ||
            !c->second.gated || !j.holds)   // a locked job's delay is its lock, not a missed slot
            continue;
        const double used = slack_used(j, worst[j.id].first);
        if (past_margin(local_.tuning(), c->second, used)) over[j.id] = used;
    }
    if (over.empty()) return false;
    // A guest (an adopted job) gated on the leaf of a conflict leaves first:
    // it was free before, and the jobs it now meets were not in conflict.
    std::set<JobId> guests;
    for (const auto& [id, used] : over) {
        (void)used;
        const JobId g = guest_on(worst[id].second, id);
        if (g >= 0) guests.insert(g);
    }
    if (!guests.empty()) {
        for (JobId g : guests) run_free(g, memory);
        rounds(leaves_of(guests, true));
        return true;
    }
    // One hand-over per leaf and pass, the job its collisions cost most: two
    // jobs meeting on a leaf need only one of them planned there, and handing
    // over both moves their conflict to the leaves they came from. The others
    // wait for the next pass (on the last one they run free).
    std::map<SwitchId, JobId> handover;
    for (const auto& [id, used] : over) {
        const SwitchId there = worst[id].second;
        if (there == res_.owners.at(id) || reowned_.count(id)) continue;
        auto h = handover.find(there);
        if (h == handover.end() || used > over[h->second]) handover[there] = id;
    }
    std::set<JobId> acted;
    for (const auto& [id, used] : over) {
        (void)used;
        SwitchId& owner = res_.owners.at(id);
        const SwitchId there = worst[id].second;
        auto h = handover.find(there);
        if (h != handover.end() && h->second == id) {
            owner = there;   // its old owner now plans around it
            reowned_.insert(id);
            if (memory) memory->owner[id] = there;
            acted.insert(id);
            continue;
        }
        if (!last_pass && h != handover.end()) continue;   // its partner moved: look again
        if (!last_pass && there != owner && !reowned_.count(id)) continue;
        run_free(id, memory);
        acted.insert(id);
    }
    rounds(leaves_of(acted, true));
    return true;
}

// Whether every job loading `leaf`'s links also loads `owner`'s, whose links
// are no wider: the owner then planned every collision there, and the
// leaf's figure differs from the owner's own only by the leaf's view of the
// same jobs (on the real stack, measurement noise). Handing the job to such
// a leaf moves its plan to a leaf that sees no more (coordd applies the
// same rule, Coordd::owner_sees_all).
bool CoordinationEpoch::owner_sees_all(SwitchId leaf, SwitchId owner) const {
    if (!links_as_wide(topo_, leaf, owner)) return false;
    auto l = members_.find(leaf);
    auto o = members_.find(owner);
    if (l == members_.end()) return true;
    if (o == members_.end()) return false;
    // Both lists hold job indices in increasing order (the constructor).
    return std::includes(o->second.begin(), o->second.end(), l->second.begin(), l->second.end());
}

// The guest to send away for a conflict of `victim` on `leaf`: the victim
// itself when it is one, else the adopted gated job loading the leaf most;
// -1 when there is none.
JobId CoordinationEpoch::guest_on(SwitchId leaf, JobId victim) const {
    if (adopted_.count(victim)) return victim;
    JobId g = -1;
    double most = 0;
    for (size_t i : members_.at(leaf)) {
        const JobId id = jobs_[i].id;
        auto c = current_.find(id);
        if (!adopted_.count(id) || ungated_.count(id) || c == current_.end() || !c->second.gated) continue;
        if (const double x = load_on(i, leaf); x > most) {
            most = x;
            g = id;
        }
    }
    return g;
}

// The average load job i puts on `leaf`'s links (0 when it loads none).
double CoordinationEpoch::load_on(size_t i, SwitchId leaf) const {
    for (const auto& [l, x] : loads_[i].per_leaf)
        if (l == leaf) return x;
    return 0;
}

// Takes a cross-leaf job off the gate on every leaf, for the memory's hold.
void CoordinationEpoch::run_free(JobId id, ConflictMemory* memory) {
    if (memory) {
        int& times = memory->free_times[id];
        memory->free_until_s[id] = now_s_ + conflict_free_hold_s(memory->free_hold_s, times++);
    }
    ungate(id, res_.owners.at(id));
}

// Off the gate on every leaf from now on in this epoch: free, decided by `owner_leaf`.
void CoordinationEpoch::ungate(JobId id, SwitchId owner_leaf) {
    ungated_.insert(id);
    JobDecision d;
    d.owner_leaf = owner_leaf;
    current_[id] = d;
}

// A leaf's gated jobs, every one fixed at its decision; `crossing` (when
// given): one of them is a cross-leaf job.
LeafProblem CoordinationEpoch::gated_only(SwitchId leaf, bool* crossing) const {
    LeafProblem pb;
    pb.leaf = leaf;
    pb.now_s = now_s_;
    bool any = false;
    for (size_t i : members_.at(leaf)) {
        auto c = current_.find(jobs_[i].id);
        if (c == current_.end() || !c->second.gated || ungated_.count(jobs_[i].id)) continue;
        pb.jobs.push_back(jobs_[i]);
        pb.fixed[jobs_[i].id] = c->second;
        any = any || res_.owners.count(jobs_[i].id);
    }
    if (crossing) *crossing = any;
    return pb;
}

// The share of a gated job's slack that a collision delay per iteration takes.
double CoordinationEpoch::slack_used(const JobProfile& job, double delay_s) const {
    auto c = current_.find(job.id);
    return slack_share(delay_s, c->second.period_s, iteration_period_s(job));
}

// An owner leaves a cross-leaf job free when gating it does not pay on its
// own leaf; on the other leaves it crosses, it meets gated jobs at a phase
// nobody chose, and where that takes a gated job past its slack the gated
// job misses slots (a sweep of vgg19 over 128 nodes: gated jobs ran 3-9 %
// slower than their periods, up to 1.25x where fair sharing gave 1.17x).
// The leaf so harmed is the one that can fit the free job among its gated
// ones: it gets the free job that loads it most, and plans it (or leaves it
// free, if gating it does not pay there either).
bool CoordinationEpoch::adopt_free_jobs(ConflictMemory* memory) {
    std::set<JobId> acted;
    double slowest = 0;
    for (const auto& [leaf, members] : members_) {
        LeafProblem pb = gated_only(leaf);
        if (pb.jobs.empty()) continue;
        size_t adopt = jobs_.size();
        double most = 0;
        for (size_t i : members) {
            const JobId id = jobs_[i].id;
            auto o = res_.owners.find(id);
            auto c = current_.find(id);
            if (o == res_.owners.end() || o->second == leaf || ungated_.count(id) || reowned_.count(id) ||
                acted.count(id) || (c != current_.end() && c->second.gated) || !jobs_[i].holds)
                continue;
            pb.jobs.push_back(jobs_[i]);   // not in pb.fixed: free at a random phase
            if (grouped_.count(id)) continue;   // a family's free rider: planned on all its leaves
            if (const double x = load_on(i, leaf); x > most) {
                most = x;
                adopt = i;
            }
        }
        if (adopt == jobs_.size()) continue;
        const auto t0 = Clock::now();
        const std::map<JobId, double> delay = local_.collision_delays(topo_, pb);
        bool harmed = false;
        for (const JobProfile& j : pb.jobs) {
            auto d = delay.find(j.id);
            auto f = pb.fixed.find(j.id);
            harmed = harmed || (f != pb.fixed.end() && d != delay.end() &&
                                past_margin(local_.tuning(), f->second, slack_used(j, d->second)));
        }
        slowest = std::max(slowest, since(t0));
        leaf_total_s_ += since(t0);
        if (!harmed) continue;
        const JobId id = jobs_[adopt].id;
        res_.owners.at(id) = leaf;
        reowned_.insert(id);
        adopted_.insert(id);
        if (memory) {
            memory->owner[id] = leaf;
            memory->adopted[id] = leaf;
        }
        acted.insert(id);
    }
    res_.slowest_leaf_s += slowest;
    if (acted.empty()) return false;
    rounds(leaves_of(acted, true));
    return true;
}

CoordinationResult CoordinationEpoch::finish(double total_s) {
    for (const auto& [leaf, r] : results_) {
        res_.predicted_cost += r.predicted_cost;
        for (const auto& [id, d] : r.jobs) {
            auto o = res_.owners.find(id);
            if (o == res_.owners.end() || o->second == leaf) res_.jobs[id] = d;   // not a former owner's
        }
    }
    for (JobId id : ungated_) res_.jobs[id] = current_[id];
    for (JobId id : grouped_) res_.jobs[id] = current_[id];
    res_.leaves_decided = static_cast<int>(results_.size());
    res_.cpu_s = leaf_total_s_;
    res_.coordinator_s = std::max(0.0, total_s - leaf_total_s_);
    return res_;
}

}  // namespace harmonics
