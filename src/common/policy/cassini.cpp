// cassini: per-link rotations on unified circles, then one shift per job by
// a BFS over the job-link affinity graph.
#include "policy/cassini.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "policy/cassini_circle.h"
#include "policy/slot_grid.h"

namespace harmonics {
namespace {

// The circle's perimeter is the job's iteration time as Cassini profiles it:
// alone on the fabric when known. A period measured under contention would
// make that contention's slowdown permanent once the job is gated to it.
double profiled_period_s(const JobProfile& job) {
    return job.isolated_period_s > 0 ? job.isolated_period_s : iteration_period_s(job);
}

// Period on the slot grid, never shorter than the job's own: a gate period
// shorter than the iteration would let the job drift off its slot.
double grid_period_s(const JobProfile& job, double slot_s) {
    double T = profiled_period_s(job);
    return std::max(1.0, std::ceil(T / slot_s - 1e-9)) * slot_s;
}

std::vector<LinkId> loaded_links(const JobProfile& job) {
    std::vector<LinkId> out;
    for (const CommPhase& ph : job.phases) {
        if (ph.alone_s <= 0 || ph.bytes_per_edge <= 0) continue;
        for (const LinkUse& u : ph.links)
            if (u.multiplicity > 0) out.push_back(u.link);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Rotations a job may take on circle c: every arc of its own period (a full
// period is the same rotation), thinned to at most max_rot.
std::vector<int> rotations_for(const CassiniCircle& c, double period_s, int max_rot) {
    int count = std::max(1, static_cast<int>(std::floor(period_s / c.bin_s + 1e-9)));
    count = std::min(count, c.bins);
    int step = (count + max_rot - 1) / max_rot;
    std::vector<int> r;
    for (int k = 0; k < count; k += step) r.push_back(k);
    return r;
}

// Same jobs, each period within `tol` (relative) of the one last decided on.
bool same_jobs_within(const std::map<JobId, double>& last, const std::map<JobId, double>& now, double tol) {
    if (last.size() != now.size()) return false;
    for (auto a = last.begin(), b = now.begin(); a != last.end(); ++a, ++b)
        if (a->first != b->first || std::abs(b->second - a->second) > tol * a->second) return false;
    return true;
}

int arcs_of(double t_s, const CassiniCircle& c) {
    long r = std::lround(t_s / c.bin_s);
    return static_cast<int>(((r % c.bins) + c.bins) % c.bins);
}

struct LinkCircle {
    LinkId id = -1;
    CassiniCircle circle;
    std::vector<int> users;                  // job indices, ascending
    std::vector<std::vector<double>> demand; // per user, rotation 0
    double contention = 0;                   // summed mean demand
    CircleRotation best;
};

}  // namespace

Decisions CassiniPolicy::decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                                EpochReason why) {
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const double slot = opts_.slot_s > 0 ? opts_.slot_s : 0.001;
    const int n = static_cast<int>(jobs.size());

    std::map<JobId, double> periods;
    std::vector<double> P(n);
    for (int i = 0; i < n; ++i) {
        periods[jobs[i].id] = profiled_period_s(jobs[i]);
        P[i] = grid_period_s(jobs[i], slot);
    }
    // Cassini reschedules on arrivals and departures; a periodic epoch with
    // the same jobs, their measured periods within kKeepTolerance of those
    // last scheduled for, keeps the schedule (and its origin): re-gating every
    // job for measurement noise would cost more than it could gain.
    if (why == EpochReason::Epoch && same_jobs_within(last_periods_, periods, kKeepTolerance)) {
        Decisions d = last_;
        d.sched_time_s = elapsed();
        return d;
    }

    // The affinity graph's links: those two or more jobs load.
    std::map<LinkId, std::vector<int>> users;
    for (int i = 0; i < n; ++i)
        for (LinkId l : loaded_links(jobs[i])) users[l].push_back(i);
    std::vector<LinkCircle> circles;
    for (auto& [id, u] : users) {
        if (u.size() < 2) continue;
        LinkCircle lc;
        lc.id = id;
        lc.users = u;
        std::vector<double> per;
        for (int i : u) per.push_back(P[i]);
        lc.circle = make_circle(per, slot, kMaxRounds, kMaxBins);
        std::vector<std::vector<int>> cands;
        for (size_t k = 0; k < u.size(); ++k) {
            lc.demand.push_back(circle_demand(lc.circle, jobs[u[k]], id, topo.link(id).capacity_Bps, P[u[k]]));
            for (double x : lc.demand.back()) lc.contention += x / lc.circle.bins;
            // Rotating every job together changes nothing: hold the first.
            cands.push_back(k == 0 ? std::vector<int>{0} : rotations_for(lc.circle, P[u[k]], kMaxRotations));
        }
        lc.best = best_rotation(lc.demand, cands, kExhaustive);
        circles.push_back(std::move(lc));
    }

    // Job -> its contended links, most contended first, so that when the graph
    // has loops the tree edges are the links where rotation matters most.
    std::vector<std::vector<int>> adj(n);
    for (int c = 0; c < static_cast<int>(circles.size()); ++c)
        for (int i : circles[c].users) adj[i].push_back(c);
    for (auto& a : adj)
        std::stable_sort(a.begin(), a.end(), [&](int x, int y) { return circles[x].contention > circles[y].contention; });

    std::vector<int> roots(n);
    for (int i = 0; i < n; ++i) roots[i] = i;
    std::stable_sort(roots.begin(), roots.end(), [&](int a, int b) { return adj[a].size() > adj[b].size(); });

    std::vector<char> shifted(n, 0), link_done(circles.size(), 0);
    std::vector<double> t(n, 0.0);
    links_.clear();
    loops_ = 0;
    for (int root : roots) {
        if (shifted[root] || adj[root].empty()) continue;
        shifted[root] = 1;
        std::deque<int> queue{root};
        while (!queue.empty()) {
            const int j = queue.front();
            queue.pop_front();
            for (int c : adj[j]) {
                if (link_done[c]) continue;
                link_done[c] = 1;
                LinkCircle& lc = circles[c];
                int already = 0;
                for (int k : lc.users) already += shifted[k];
                CassiniLinkResult& res = links_[lc.id];
                res.period_circle_s = lc.circle.perimeter_s;
                res.best_score = lc.best.score;
                size_t pos_j = std::find(lc.users.begin(), lc.users.end(), j) - lc.users.begin();
                if (already == 1) {
                    // Tree edge: the link's relative rotations carry over as is.
                    for (size_t k = 0; k < lc.users.size(); ++k) {
                        int u = lc.users[k];
                        if (u == j) continue;
                        t[u] = t[j] + (lc.best.rotation[k] - lc.best.rotation[pos_j]) * lc.circle.bin_s;
                        shifted[u] = 1;
                        queue.push_back(u);
                    }
                    continue;
                }
                // Loop: jobs shifted through other links stay where they are;
                // the rest take their best rotations against them.
                res.closes_loop = true;
                ++loops_;
                std::vector<std::vector<int>> cands;
                for (int u : lc.users)
                    cands.push_back(shifted[u] ? std::vector<int>{arcs_of(t[u], lc.circle)}
                                               : rotations_for(lc.circle, P[u], kMaxRotations));
                CircleRotation r = best_rotation(lc.demand, cands, kExhaustive);
                for (size_t k = 0; k < lc.users.size(); ++k) {
                    int u = lc.users[k];
                    if (shifted[u]) continue;
                    t[u] = r.rotation[k] * lc.circle.bin_s;
                    shifted[u] = 1;
                    queue.push_back(u);
                }
            }
        }
    }

    Decisions d;
    for (int i = 0; i < n; ++i) {
        if (!shifted[i]) continue;   // loads no contended link: runs free
        JobDecision jd;
        jd.gated = true;
        jd.period_s = P[i];
        jd.shift_s = std::fmod(t[i], P[i]);
        if (jd.shift_s < 0) jd.shift_s += P[i];
        if (jd.shift_s >= P[i] - 1e-12) jd.shift_s = 0;
        jd.origin_s = now_s;
        t[i] = jd.shift_s;
        d.jobs[jobs[i].id] = jd;
    }
    for (const LinkCircle& lc : circles) {
        std::vector<int> rot;
        for (int u : lc.users) rot.push_back(arcs_of(t[u], lc.circle));
        links_[lc.id].final_score = compatibility_score(lc.demand, rot);
    }
    last_periods_ = std::move(periods);
    last_ = d;
    d.sched_time_s = elapsed();
    return d;
}

std::unique_ptr<Policy> make_cassini_policy(const PolicyOptions& opts) {
    return std::make_unique<CassiniPolicy>(opts);
}

}  // namespace harmonics
