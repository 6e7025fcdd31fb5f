// Harmonics' Global Coordinator: owners for cross-leaf jobs and the bounded
// rounds in which owners' decisions reach the other leaves. Everything it
// keeps or hands over is per job (owner, shift, period).
#include "policy/global_coordinator.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

namespace harmonics {
namespace {

using Clock = std::chrono::steady_clock;

// Which leaf each uplink/downlink belongs to.
std::unordered_map<LinkId, SwitchId> leaf_of_links(const Topology& topo) {
    std::unordered_map<LinkId, SwitchId> m;
    for (SwitchId s : topo.leaves())
        for (LinkId l : leaf_links(topo, s)) m[l] = s;
    return m;
}

// Per job, the leaves whose uplink/downlink it loads, with its average load there.
struct LeafLoad {
    std::vector<std::pair<SwitchId, double>> per_leaf;
};

std::vector<LeafLoad> leaf_loads(const Topology& topo, const std::vector<JobProfile>& jobs,
                                 const std::unordered_map<LinkId, SwitchId>& leaf_of) {
    std::vector<LeafLoad> out(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
        const JobProfile& j = jobs[i];
        const double T = iteration_period_s(j);
        std::map<SwitchId, double> acc;
        for (const CommWindow& w : comm_windows(j)) {
            const CommPhase& ph = *w.phase;
            if (ph.alone_s <= 0) continue;
            for (const LinkUse& u : ph.links) {
                auto it = leaf_of.find(u.link);
                if (it == leaf_of.end()) continue;
                double frac = u.multiplicity * ph.bytes_per_edge / ph.alone_s / topo.link(u.link).capacity_Bps;
                acc[it->second] += T > 0 ? frac * (w.end_s - w.begin_s) / T : 0;
            }
        }
        out[i].per_leaf.assign(acc.begin(), acc.end());
    }
    return out;
}

template <typename Map>
void forget_departed(Map& m, const std::set<JobId>& present) {
    for (auto it = m.begin(); it != m.end();) it = present.count(it->first) ? std::next(it) : m.erase(it);
}

bool same_decision(const JobDecision& a, const JobDecision& b) {
    return a.gated == b.gated && a.shift_s == b.shift_s && a.period_s == b.period_s && a.origin_s == b.origin_s;
}

}  // namespace

std::map<JobId, SwitchId> GlobalCoordinator::assign_owners(const Topology& topo,
                                                           const std::vector<JobProfile>& jobs) const {
    const auto leaf_of = leaf_of_links(topo);
    const std::vector<LeafLoad> loads = leaf_loads(topo, jobs, leaf_of);
    std::unordered_map<SwitchId, double> contention;
    for (const LeafLoad& l : loads)
        for (const auto& [leaf, x] : l.per_leaf) contention[leaf] += x;
    std::map<JobId, SwitchId> owners;
    for (size_t i = 0; i < jobs.size(); ++i) {
        if (loads[i].per_leaf.size() < 2) continue;
        SwitchId best = -1;
        double most = -1;
        for (const auto& [leaf, x] : loads[i].per_leaf) {  // leaves in ascending id order
            (void)x;
            if (contention[leaf] > most + 1e-12) {
                most = contention[leaf];
                best = leaf;
            }
        }
        owners[jobs[i].id] = best;
    }
    return owners;
}

CoordinationResult GlobalCoordinator::plan(const Topology& topo, const std::vector<JobProfile>& jobs,
                                           const std::map<JobId, JobDecision>& previous, const LocalScheduler& local,
                                           double now_s, ConflictMemory* memory) const {
    const auto t0 = Clock::now();
    CoordinationResult res;
    res.owners = assign_owners(topo, jobs);
    const auto leaf_of = leaf_of_links(topo);
    const std::vector<LeafLoad> loads = leaf_loads(topo, jobs, leaf_of);
    std::map<SwitchId, std::vector<size_t>> members;  // leaf -> jobs loading its links
    for (size_t i = 0; i < jobs.size(); ++i)
        for (const auto& [leaf, x] : loads[i].per_leaf) {
            (void)x;
            members[leaf].push_back(i);
        }
    // Latest decision of every job: last epoch's, then each round's. For
    // cross-leaf jobs this is what the coordinator hands to the other leaves.
    std::map<JobId, JobDecision> current = previous;
    // Cross-leaf jobs taken off the gate this epoch: every leaf, the owner
    // included, sees them running free.
    std::set<JobId> ungated;
    std::set<JobId> reowned;   // cross-leaf jobs handed to the leaf where they collided
    if (memory) {
        std::set<JobId> present;
        for (const JobProfile& j : jobs) present.insert(j.id);
        forget_departed(memory->owner, present);
        forget_departed(memory->free_until_s, present);
        forget_departed(memory->free_times, present);
        for (size_t i = 0; i < jobs.size(); ++i) {
            auto o = res.owners.find(jobs[i].id);
            if (o == res.owners.end()) continue;
            auto m = memory->owner.find(jobs[i].id);
            if (m != memory->owner.end())
                for (const auto& [leaf, x] : loads[i].per_leaf) {
                    (void)x;
                    if (leaf == m->second) {
                        o->second = leaf;
                        reowned.insert(jobs[i].id);
                    }
                }
            auto f = memory->free_until_s.find(jobs[i].id);
            if (f != memory->free_until_s.end() && now_s < f->second) {
                ungated.insert(jobs[i].id);
                JobDecision d;
                d.owner_leaf = o->second;
                current[jobs[i].id] = d;
            }
        }
    }
    std::map<SwitchId, LeafResult> results;
    double leaf_total = 0;
    auto leaves_of = [&](const std::set<JobId>& ids, bool with_owner) {
        std::set<SwitchId> out;
        for (size_t i = 0; i < jobs.size(); ++i) {
            if (!ids.count(jobs[i].id)) continue;
            const SwitchId owner = res.owners.at(jobs[i].id);
            for (const auto& [leaf, x] : loads[i].per_leaf) {
                (void)x;
                if (with_owner || leaf != owner) out.insert(leaf);
            }
        }
        return out;
    };
    // Rounds of leaf decisions from `dirty` until no owner's decision moves
    // (at most max_rounds_); the leaves still to decide again are returned.
    auto rounds = [&](std::set<SwitchId> dirty) {
        for (int round = 0; !dirty.empty() && round < max_rounds_; ++round) {
            res.rounds++;
            double slowest = 0;
            for (SwitchId leaf : dirty) {
                LeafProblem pb;
                pb.leaf = leaf;
                pb.now_s = now_s;
                for (size_t i : members[leaf]) {
                    const JobProfile& j = jobs[i];
                    pb.jobs.push_back(j);
                    auto o = res.owners.find(j.id);
                    if (ungated.count(j.id)) {
                        pb.fixed[j.id] = JobDecision{};
                    } else if (o != res.owners.end() && o->second != leaf) {
                        auto c = current.find(j.id);
                        pb.fixed[j.id] = c != current.end() ? c->second : JobDecision{};  // undecided: runs free
                    } else if (auto p = current.find(j.id); p != current.end()) {
                        pb.previous[j.id] = p->second;
                    }
                }
                LeafResult r = local.decide(topo, pb);
                slowest = std::max(slowest, r.wall_s);
                leaf_total += r.wall_s;
                results[leaf] = std::move(r);
            }
            res.slowest_leaf_s += slowest;
            // Hand owners' decisions to the other leaves; those whose fixed jobs moved decide again.
            std::set<JobId> moved;
            for (SwitchId leaf : dirty)
                for (const auto& [id, d] : results[leaf].jobs) {
                    auto c = current.find(id);
                    bool same = c != current.end() && same_decision(c->second, d);
                    current[id] = d;
                    if (!same && res.owners.count(id)) moved.insert(id);
                }
            res.unsettled = static_cast<int>(moved.size());
            dirty = leaves_of(moved, false);
        }
        if (dirty.empty()) res.unsettled = 0;
        return dirty;
    };
    std::set<SwitchId> all;
    for (const auto& [leaf, m] : members) all.insert(leaf);
    rounds(all);
    // An owner's slack rule covers the collisions on its own leaf; a
    // cross-leaf job also meets those of the other leaves it crosses, where
    // it is fixed and nobody checked them. A gated job whose collisions on any
    // of its leaves take more than its slack misses slots for good (a sweep of
    // one model scattered over the leaves ran 7 % slower than fair sharing).
    // Such jobs run free, which the leaves then plan around, for a bounded
    // number of passes. The worst leaf, not the sum: collisions of the same
    // rings at the same time on several leaves slow a ring once (an exact
    // overlay of the leaves' timelines gave the same results, doc/scale.md),
    // and one number per job and leaf is what schedd can report to coordd.
    for (int pass = 0; pass < max_rounds_; ++pass) {
        std::map<JobId, std::pair<double, SwitchId>> worst;   // per job: its worst leaf's delay per iteration, that leaf
        double slowest = 0;
        for (SwitchId leaf : all) {
            LeafProblem pb;
            pb.leaf = leaf;
            pb.now_s = now_s;
            bool crossing = false;
            for (size_t i : members[leaf]) {
                auto c = current.find(jobs[i].id);
                if (c == current.end() || !c->second.gated || ungated.count(jobs[i].id)) continue;
                pb.jobs.push_back(jobs[i]);
                pb.fixed[jobs[i].id] = c->second;
                crossing = crossing || res.owners.count(jobs[i].id);
            }
            if (!crossing) continue;
            const auto l0 = Clock::now();
            for (const auto& [id, x] : local.collision_delays(topo, pb))
                if (x > worst[id].first) worst[id] = {x, leaf};
            const double took = std::chrono::duration<double>(Clock::now() - l0).count();
            slowest = std::max(slowest, took);
            leaf_total += took;
        }
        res.slowest_leaf_s += slowest;
        std::set<JobId> over;
        for (const JobProfile& j : jobs) {
            auto c = current.find(j.id);
            if (!res.owners.count(j.id) || ungated.count(j.id) || c == current.end() || !c->second.gated) continue;
            const double slack_s = c->second.period_s - iteration_period_s(j);
            if (worst[j.id].first > local.tuning().slack_margin * slack_s + 1e-12) over.insert(j.id);
        }
        if (over.empty()) break;
        for (JobId id : over) {
            SwitchId& owner = res.owners.at(id);
            const SwitchId there = worst[id].second;
            if (there != owner && !reowned.count(id)) {
                // The leaf where it collides decides it from now on, around
                // the jobs fixed there; its old owner plans around it.
                owner = there;
                reowned.insert(id);
                if (memory) memory->owner[id] = there;
                continue;
            }
            ungated.insert(id);
            if (memory) {
                int& times = memory->free_times[id];
                memory->free_until_s[id] = now_s + memory->free_hold_s * double(1 << std::min(times, 5));
                times++;
            }
            JobDecision d;
            d.owner_leaf = owner;
            current[id] = d;
        }
        rounds(leaves_of(over, true));
    }
    for (const auto& [leaf, r] : results) {
        res.predicted_cost += r.predicted_cost;
        for (const auto& [id, d] : r.jobs) {
            auto o = res.owners.find(id);
            if (o == res.owners.end() || o->second == leaf) res.jobs[id] = d;   // not a former owner's
        }
    }
    for (JobId id : ungated) res.jobs[id] = current[id];
    res.leaves_decided = static_cast<int>(results.size());
    res.cpu_s = leaf_total;
    double total = std::chrono::duration<double>(Clock::now() - t0).count();
    res.coordinator_s = std::max(0.0, total - leaf_total);
    return res;
}

}  // namespace harmonics
