#include "policy/coordination_epoch.h"

#include <algorithm>
#include <chrono>

namespace harmonics {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <typename Map>
void forget_departed(Map& m, const std::set<JobId>& present) {
    for (auto it = m.begin(); it != m.end();) it = present.count(it->first) ? std::next(it) : m.erase(it);
}

bool same_decision(const JobDecision& a, const JobDecision& b) {
    return a.gated == b.gated && a.shift_s == b.shift_s && a.period_s == b.period_s && a.origin_s == b.origin_s;
}

}  // namespace

CoordinationEpoch::CoordinationEpoch(const Topology& topo, const std::vector<JobProfile>& jobs,
                                     const std::map<JobId, JobDecision>& previous, const LocalScheduler& local,
                                     double now_s, int max_rounds, std::map<JobId, SwitchId> owners)
    : topo_(topo), jobs_(jobs), local_(local), now_s_(now_s), max_rounds_(max_rounds),
      loads_(leaf_loads(topo, jobs, leaf_of_links(topo))), current_(previous) {
    res_.owners = std::move(owners);
    for (size_t i = 0; i < jobs.size(); ++i)
        for (const auto& [leaf, x] : loads_[i].per_leaf) {
            (void)x;
            members_[leaf].push_back(i);
        }
}

void CoordinationEpoch::recall(ConflictMemory& memory) {
    std::set<JobId> present;
    for (const JobProfile& j : jobs_) present.insert(j.id);
    forget_departed(memory.owner, present);
    forget_departed(memory.free_until_s, present);
    forget_departed(memory.free_times, present);
    for (size_t i = 0; i < jobs_.size(); ++i) {
        auto o = res_.owners.find(jobs_[i].id);
        if (o == res_.owners.end()) continue;
        auto m = memory.owner.find(jobs_[i].id);
        if (m != memory.owner.end())
            for (const auto& [leaf, x] : loads_[i].per_leaf) {
                (void)x;
                if (leaf == m->second) {
                    o->second = leaf;
                    reowned_.insert(jobs_[i].id);
                }
            }
        auto f = memory.free_until_s.find(jobs_[i].id);
        if (f != memory.free_until_s.end() && now_s_ < f->second) {
            ungated_.insert(jobs_[i].id);
            JobDecision d;
            d.owner_leaf = o->second;
            current_[jobs_[i].id] = d;
        }
    }
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
        if (ungated_.count(j.id)) {
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
    for (const auto& [leaf, members] : members_) {
        LeafProblem pb;
        pb.leaf = leaf;
        pb.now_s = now_s_;
        bool crossing = false;
        for (size_t i : members) {
            auto c = current_.find(jobs_[i].id);
            if (c == current_.end() || !c->second.gated || ungated_.count(jobs_[i].id)) continue;
            pb.jobs.push_back(jobs_[i]);
            pb.fixed[jobs_[i].id] = c->second;
            crossing = crossing || res_.owners.count(jobs_[i].id);
        }
        if (!crossing) continue;
        const auto t0 = Clock::now();
        for (const auto& [id, x] : local_.collision_delays(topo_, pb))
            if (x > worst[id].first) worst[id] = {x, leaf};
        slowest = std::max(slowest, since(t0));
        leaf_total_s_ += since(t0);
    }
    res_.slowest_leaf_s += slowest;
    std::map<JobId, double> over;   // job -> share of its slack its worst leaf takes
    for (const JobProfile& j : jobs_) {
        auto c = current_.find(j.id);
        if (!res_.owners.count(j.id) || ungated_.count(j.id) || c == current_.end() || !c->second.gated) continue;
        const double used = slack_share(worst[j.id].first, c->second.period_s, iteration_period_s(j));
        if (used > local_.tuning().slack_margin + 1e-12) over[j.id] = used;
    }
    if (over.empty()) return false;
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
        ungated_.insert(id);
        if (memory) {
            int& times = memory->free_times[id];
            memory->free_until_s[id] = now_s_ + conflict_free_hold_s(memory->free_hold_s, times++);
        }
        JobDecision d;
        d.owner_leaf = owner;
        current_[id] = d;
        acted.insert(id);
    }
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
    res_.leaves_decided = static_cast<int>(results_.size());
    res_.cpu_s = leaf_total_s_;
    res_.coordinator_s = std::max(0.0, total_s - leaf_total_s_);
    return res_;
}

}  // namespace harmonics
