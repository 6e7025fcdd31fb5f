// harmonics-schedd's decisions: every epoch, and soon after an arrival, a
// departure or another leaf's news, the Local Scheduler decides the leaf's jobs;
// the slack other leaves' gated jobs use here and adoptions are measured too.
#include "schedd.h"

#include <event2/event.h>

#include <algorithm>

#include "job_profile.h"
#include "policy/holds.h"
#include "util/clock.h"
#include "util/log.h"
#include "wire/schedule_msg.h"

namespace harmonics::sched {

namespace {

double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

void Schedd::epoch_cb(int, short, void* arg) { static_cast<Schedd*>(arg)->on_epoch(); }

void Schedd::soon_cb(int, short, void* arg) {
    auto* self = static_cast<Schedd*>(arg);
    self->soon_pending_ = false;
    if (self->decide(Trigger::ArrivalOrDeparture)) self->send_proposal();
}

void Schedd::react_cb(int, short, void* arg) {
    auto* self = static_cast<Schedd*>(arg);
    self->react_pending_ = false;
    if (self->decide(Trigger::OtherLeaf)) self->send_proposal();
}

void Schedd::decide_soon() {
    // Coalesce a burst (all ranks of a new job) into one decision.
    if (soon_pending_ || !soon_ev_) return;
    soon_pending_ = true;
    timeval tv = to_timeval(0.005);
    event_add(soon_ev_, &tv);
}

// Another leaf moved a job we host (or coordd moved its ownership): re-plan
// after a random delay of up to half an epoch, not at once. Leaves hear the
// same news at the same moment; reacting together, owners whose jobs meet in
// a cycle (job 1 avoids 3 here, 3 avoids 4 there, ...) each move away from a
// neighbour that moves too, and swap shifts every round for good. Reacting
// one after the other, each sees the last move (decide() publishes at once).
void Schedd::react_soon() {
    if (react_pending_ || !react_ev_) return;
    react_pending_ = true;
    std::uniform_real_distribution<double> delay(0.005, std::max(0.005, cfg_.epoch_s / 2));
    timeval tv = to_timeval(delay(rng_));
    event_add(react_ev_, &tv);
}

void Schedd::on_epoch() {
    double now = mono_s();
    expire_jobs(now);
    for (auto& [id, j] : jobs_) {
        auto s = j.agg.summarize(now, fresh_s());
        if (s) j.summary = s;
        update_holds(j, now);
    }
    watch_outrunning(now);
    decide(Trigger::Epoch);
    send_proposal();
}

// A job holds its collectives while no fresh report of one of its ranks
// says otherwise; one that does not is planned as running free (its
// neighbours are planned around it at a random phase, not at a shift it
// would never keep) or, by its owner, at the point where its bursts lock
// behind gated ones, and coordd hears it for the job's other leaves. While
// no rank reports at all the last word stands, as the job's rhythm does.
void Schedd::update_holds(SchedJob& j, double now) {
    if (now - j.last_report_s > fresh_s()) return;
    for (auto it = j.not_holding.begin(); it != j.not_holding.end();)
        it = now - it->second > fresh_s() ? j.not_holding.erase(it) : std::next(it);
    const bool holds = j.not_holding.empty();
    if (holds == j.holds) return;
    j.holds = holds;
    if (!holds)
        HLOG_INFO("job %lld: rank %d does not hold its collectives (measuring only): planned as running free, or "
                  "where it locks behind gated bursts",
                  (long long)j.id, j.not_holding.begin()->first);
    else
        HLOG_INFO("job %lld: every rank reporting holds its collectives again", (long long)j.id);
    decide_soon();
}

// A gated job this leaf decides whose iterations, net of the gate's holds,
// keep running past its period misses its slot and is held to the next one,
// iteration after iteration: once it has for kOutrunEpochs epochs under one
// decision it runs free for a conflict hold, doubled each further time
// (LocalTuning::free_outrunning, FreeOutrunning=; the simulator's Global
// Coordinator applies the same rule, CoordinationEpoch::free_outrunning).
// Phase-family members are coordd's to decide, not ours.
void Schedd::watch_outrunning(double now) {
    if (!local_ || !local_->tuning().free_outrunning || cfg_.policy == "fair") return;
    std::set<JobId> present;
    for (auto& [id, j] : jobs_) {
        present.insert(id);
        const bool watched = j.summary && j.decision && j.decision->gated && owns(j) && !plans_free(j) &&
                             !measuring(j) && j.holds && j.holds_elsewhere;
        const double period_s = watched ? natural_period_s(*j.summary) : 0;
        const JobDecision d = watched ? *j.decision : JobDecision{};
        if (!outrun_.seen(id, d, outruns(period_s, d, local_->tuning().keep_tolerance), now)) continue;
        const double hold_s = conflict_free_hold_s(kConflictFreeHoldEpochs * cfg_.epoch_s, j.outran_times++);
        j.outran_until_s = now + hold_s;
        HLOG_INFO("job %lld: gated at period %.4f s it iterated at %.4f s (net of the gate's holds) for %d epochs "
                  "and %d periods: it misses its slots; running free for %.0f s",
                  (long long)id, d.period_s, period_s, kOutrunEpochs, kOutrunIterations, hold_s);
    }
    outrun_.forget_all_but(present);
}

void Schedd::expire_jobs(double now) {
    // A job nobody reports for (no hook left, no fresh report) has left this
    // leaf, unless coordd says it still runs.
    double gone = std::max(10 * cfg_.report_interval_s, 5 * cfg_.epoch_s);
    bool departed = false;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        SchedJob& j = it->second;
        if (j.hooks.empty() && !j.known_to_coordd && now - j.last_report_s > gone) {
            HLOG_INFO("job %lld departed (no hook for %.0f s)", (long long)j.id, gone);
            it = jobs_.erase(it);
            departed = true;
        } else {
            ++it;
        }
    }
    if (departed) decide_soon();
}

bool Schedd::is_cross_leaf(const SchedJob& j) const {
    if (j.leaves.size() > 1 || !j.owner_leaf.empty()) return true;
    if (j.nodes_complete) return false;
    // Without Slurm's node list: more nodes than report here means the job
    // runs on other leaves too.
    return j.n_nodes > 0 && std::size_t(j.n_nodes) > j.local_nodes.size();
}

bool Schedd::owns(const SchedJob& j) const { return !is_cross_leaf(j) || j.owner_leaf == leaf_name_; }

double Schedd::decide_now() {
    decide(Trigger::Epoch);
    return last_decide_wall_s_;
}

// True when the decision of a cross-leaf job this leaf owns changed: the
// caller tells coordd at once, so the other leaves plan around it.
bool Schedd::decide(Trigger why) {
    double t0 = mono_s(), c0 = thread_cpu_s();
    epoch_++;
    LeafProblem pb;
    pb.leaf = leaf_;
    pb.now_s = wall_s();
    std::vector<LinkId> links = leaf_links(topo_, leaf_);
    std::vector<JobId> idle;   // jobs that do not load the leaf's uplink: run free
    for (auto& [id, j] : jobs_) {
        if (!j.summary) continue;
        std::vector<std::string> nodes = j.all_nodes;
        if (nodes.empty()) nodes.assign(j.local_nodes.begin(), j.local_nodes.end());
        std::vector<SwitchId> leaves;
        for (const std::string& l : j.leaves)
            if (SwitchId s = topo_.find_switch(l); s >= 0) leaves.push_back(s);
        if (is_cross_leaf(j) && leaves.empty()) leaves.push_back(leaf_);
        if (is_cross_leaf(j) && leaves.size() == 1) {
            // coordd has not told us where the rest of the job runs: it still
            // crosses our uplink. Name our parent's other child as a stand-in.
            const Switch& me = topo_.sw(leaf_);
            if (me.parent >= 0)
                for (SwitchId s : topo_.sw(me.parent).children)
                    if (s != leaf_) {
                        leaves.push_back(s);
                        break;
                    }
        }
        JobProfile p = build_profile(topo_, id, nodes, leaves, *j.summary);
        // One that does not hold is planned around, and may make the plan
        // absorb its collisions (LocalTuning::absorb_measuring).
        p.holds = j.holds && j.holds_elsewhere;
        p.end_s = j.end_time_s;
        j.uplink_load = uplink_load(topo_, p, leaf_);
        if (!job_loads(p, links)) {
            idle.push_back(id);
            continue;
        }
        if (plans_free(j)) pb.fixed[id] = JobDecision{};
        else if (!owns(j)) pb.fixed[id] = j.fixed ? *j.fixed : JobDecision{};
        else if (j.decision) pb.previous[id] = *j.decision;
        pb.jobs.push_back(std::move(p));
    }
    for (const JobProfile& p : pb.jobs)
        HLOG_DEBUG("epoch %llu: job %lld measured period %.4f s, isolated %.4f s, compute %.4f s, %zu phases%s",
                   (unsigned long long)epoch_, (long long)p.id, p.measured_period_s, p.isolated_period_s, p.compute_s,
                   p.phases.size(), pb.fixed.count(p.id) ? " (fixed by its owner)" : "");
    LeafResult res;
    if (cfg_.policy != "fair" && !pb.jobs.empty()) res = local_->decide(topo_, pb);
    if (!res.explain.empty()) HLOG_DEBUG("epoch %llu: %s", (unsigned long long)epoch_, res.explain.c_str());
    decisions_++;
    last_predicted_cost_ = res.predicted_cost;
    last_decide_wall_s_ = res.wall_s;
    double now = wall_s();
    bool published_change = false;
    const char* trigger = why == Trigger::Epoch                ? "epoch"
                          : why == Trigger::ArrivalOrDeparture ? "arrival/departure"
                                                               : "coordd's news";
    for (auto& [id, j] : jobs_) {
        if (!j.summary) continue;
        JobDecision d;   // free unless decided (and free while coordd says so, or it does not hold)
        if (!plans_free(j) && !owns(j) && j.fixed) d = *j.fixed;
        if (!plans_free(j) && owns(j))
            if (auto r = res.jobs.find(id); r != res.jobs.end()) d = r->second;
        d.owner_leaf = owns(j) ? leaf_ : topo_.find_switch(j.owner_leaf);
        if (!j.decision || !same_gate(*j.decision, d)) {
            j.decision = d;
            j.decision_epoch = owns(j) ? epoch_ : j.fixed_epoch;
            if (owns(j) && is_cross_leaf(j)) published_change = true;
            // A change of schedule is news an admin may need to explain: say
            // what the leaf predicted for each way of running its jobs.
            // locked: a measuring job planned where it locks (its hooks stay free).
            const char* how = d.gated ? (measuring(j) ? "locked" : "gated") : "free";
            HLOG_INFO("job %lld: %s shift %.4f period %.4f (epoch %llu, %s, %s; %s)", (long long)id, how, d.shift_s,
                      d.period_s, (unsigned long long)j.decision_epoch, trigger, owns(j) ? "decided here" : "owner's",
                      owns(j) ? res.explain.c_str() : "-");
        } else if (!owns(j) && (j.decision_epoch != j.fixed_epoch || j.decision->groups != d.groups)) {
            // The same schedule, now another decider's (coordd took a free job
            // into a family as a free rider): its epoch is the decider's, as
            // on every other leaf the job crosses, and its window count is
            // the rider's mark, which this leaf hands a restarted coordd.
            j.decision = d;
            j.decision_epoch = j.fixed_epoch;
        }
        // A plan kept as it stands may now be held to another share of the
        // slack (a job gated by another leaf came or went): not a new gate.
        j.decision->slack_margin = d.slack_margin;
        push_schedule(j, now);
    }
    (void)idle;
    measure_slack_used(pb.jobs);
    choose_adoption(pb.jobs);
    if (decide_times_.size() >= 100000) {
        decide_times_.erase(decide_times_.begin(), decide_times_.begin() + 50000);
        decide_cpu_.erase(decide_cpu_.begin(), decide_cpu_.begin() + 50000);
        policy_times_.erase(policy_times_.begin(), policy_times_.begin() + 50000);
    }
    policy_times_.push_back(res.wall_s);
    decide_times_.push_back(mono_s() - t0);
    decide_cpu_.push_back(thread_cpu_s() - c0);
    return published_change;
}

// What the gated jobs' decisions now in force make them cost each other on
// this leaf, for the cross-leaf ones: each owner checked only its own leaf,
// so every leaf reports, and coordd hands a job whose worst leaf takes more
// than its slack to that leaf, or runs it free (the simulator's Global
// Coordinator applies the same rule, policy/global_coordinator.cpp).
void Schedd::measure_slack_used(const std::vector<JobProfile>& profiles) {
    LeafProblem pb;
    pb.leaf = leaf_;
    pb.now_s = wall_s();
    bool crossing = false;
    for (const JobProfile& p : profiles) {
        SchedJob& j = jobs_.at(p.id);
        j.slack_used = 0;
        if (!j.decision || !j.decision->gated) continue;
        pb.jobs.push_back(p);
        pb.fixed[p.id] = *j.decision;
        crossing = crossing || is_cross_leaf(j);
    }
    if (!crossing || cfg_.policy == "fair") return;
    const std::map<JobId, double> delay = local_->collision_delays(topo_, pb);
    for (const JobProfile& p : profiles) {
        SchedJob& j = jobs_.at(p.id);
        auto d = delay.find(p.id);
        if (d == delay.end() || !is_cross_leaf(j)) continue;
        j.slack_used = slack_share(d->second, j.decision->period_s, iteration_period_s(p));
        if (j.slack_used > 0)
            HLOG_DEBUG("epoch %llu: job %lld: collisions here take %.0f%% of its slack", (unsigned long long)epoch_,
                       (long long)p.id, 100 * j.slack_used);
    }
}

// A free cross-leaf job that another leaf owns meets our gated jobs at a
// phase nobody chose; when that takes one of them past its slack, we ask
// coordd for it (the one loading our uplink most), to plan it among them
// (the simulator's Global Coordinator adopts the same way,
// policy/coordination_epoch.cpp).
void Schedd::choose_adoption(const std::vector<JobProfile>& profiles) {
    LeafProblem pb;
    pb.leaf = leaf_;
    pb.now_s = wall_s();
    SchedJob* want = nullptr;
    bool gated = false;
    for (const JobProfile& p : profiles) {
        SchedJob& j = jobs_.at(p.id);
        j.adopt = false;
        if (j.decision && j.decision->gated) {
            pb.jobs.push_back(p);
            pb.fixed[p.id] = *j.decision;
            gated = true;
        } else if (is_cross_leaf(j) && !owns(j) && !plans_free(j) && !measuring(j)) {
            pb.jobs.push_back(p);   // not in pb.fixed: free at a random phase
            if (!want || j.uplink_load > want->uplink_load) want = &j;
        }
    }
    if (!gated || !want || cfg_.policy == "fair") return;
    const std::map<JobId, double> delay = local_->collision_delays(topo_, pb);
    for (const JobProfile& p : pb.jobs) {
        auto d = delay.find(p.id);
        auto f = pb.fixed.find(p.id);
        if (d == delay.end() || f == pb.fixed.end()) continue;
        const double used = slack_share(d->second, f->second.period_s, iteration_period_s(p));
        if (!past_margin(local_->tuning(), f->second, used)) continue;
        want->adopt = true;
        HLOG_DEBUG("epoch %llu: job %lld runs free here and takes job %lld to %.0f%% of its slack: asking to own it",
                   (unsigned long long)epoch_, (long long)want->id, (long long)p.id, 100 * used);
        return;
    }
}

void Schedd::push_schedule(SchedJob& j, double now_wall) {
    if (!j.decision || j.hooks.empty()) return;
    // A measuring job's lock point is for the leaves' plans, not a gate.
    const JobDecision d = measuring(j) ? JobDecision{} : *j.decision;
    Harmonics__Schedule s = HARMONICS__SCHEDULE__INIT;
    std::string owner = owns(j) ? leaf_name_ : j.owner_leaf;
    wire::fill_schedule(&s, j.id, d, j.decision_epoch, owner.c_str());
    // Renewed every epoch; a hook that stops hearing from us runs free.
    s.has_valid_until_s = 1;
    s.valid_until_s = now_wall + 3 * cfg_.epoch_s + cfg_.connect_timeout_s;
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_SCHEDULE;
    env.schedule = &s;
    for (std::uint64_t id : j.hooks)
        if (wire::Connection* c = hooks_->find(id)) c->send(env);
}

}  // namespace harmonics::sched
