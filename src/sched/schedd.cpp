#include "schedd.h"

#include <event2/event.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>

#include "config/policy_options.h"
#include "job_profile.h"
#include "topology/hostlist.h"
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
std::string short_hostname() {
    char h[256] = {0};
    gethostname(h, sizeof h - 1);
    std::string s(h);
    return s.substr(0, s.find('.'));
}

}  // namespace

Schedd::Schedd(ScheddOptions opts) : opts_(std::move(opts)) {}

Schedd::~Schedd() {
    hooks_.reset();
    coord_.reset();
    for (event* e : signal_evs_) event_free(e);
    if (epoch_ev_) event_free(epoch_ev_);
    if (soon_ev_) event_free(soon_ev_);
    if (react_ev_) event_free(react_ev_);
    if (base_) event_base_free(base_);
}

int Schedd::bound_port() const { return hooks_ ? hooks_->bound_port() : 0; }

bool Schedd::load_config(HarmonicsConfig* cfg, Topology* topo, SwitchId* leaf, std::string* listen,
                         std::string* err) {
    try {
        *cfg = parse_harmonics_conf(opts_.config_path);
        *topo = load_topology(*cfg);
    } catch (const std::exception& e) {
        *err = e.what();
        return false;
    }
    std::string name = opts_.leaf;
    if (name.empty()) {
        // The leaf whose Schedd= names this host, else the leaf this host is a node of.
        std::string host = short_hostname();
        for (const SwitchConfig& s : cfg->switches) {
            std::string h;
            int port = 0;
            if (!s.schedd.empty() && (s.schedd == host || (split_host_port(s.schedd, &h, &port) && h == host)))
                name = s.name;
        }
        if (name.empty()) {
            SwitchId l = leaf_of_host(*topo, host);
            if (l >= 0) name = topo->sw(l).name;
        }
        if (name.empty()) {
            *err = "cannot tell which leaf switch this host (" + host +
                   ") serves: give --leaf or a SwitchName=... Schedd=" + host + " line in " + cfg->path;
            return false;
        }
    }
    *leaf = topo->find_switch(name);
    if (*leaf < 0 || !topo->sw(*leaf).is_leaf()) {
        *err = "leaf '" + name + "' is not a leaf switch of " + cfg->topology_file;
        return false;
    }
    *listen = opts_.listen;
    if (listen->empty()) *listen = schedd_address(*cfg, *topo, *leaf);
    if (listen->empty()) *listen = "0.0.0.0:" + std::to_string(cfg->sched_port);
    return true;
}

void Schedd::apply_config(HarmonicsConfig cfg, Topology topo) {
    cfg_ = std::move(cfg);
    topo_ = std::move(topo);
    const PolicyOptions po = policy_options(cfg_);
    local_ = std::make_unique<LocalScheduler>(po, local_tuning(po));
    slurm_uid_known_ = false;
    if (passwd* pw = getpwnam(cfg_.slurm_user.c_str())) {
        slurm_uid_ = pw->pw_uid;
        slurm_uid_known_ = true;
    }
    log_set_level(cfg_.log_level);
}

bool Schedd::start(std::string* err) {
    HarmonicsConfig cfg;
    Topology topo;
    if (!load_config(&cfg, &topo, &leaf_, &listen_, err)) return false;
    leaf_name_ = topo.sw(leaf_).name;
    apply_config(std::move(cfg), std::move(topo));

    wire::ConnLimits lim;
    if (!wire::open_daemon_loop(cfg_.max_frame_bytes, opts_.idle_timeout_s, &base_, &lim, err)) return false;
    hooks_ = std::make_unique<wire::Listener>(base_, lim, &counters_);
    hooks_->on_accept([this](wire::Connection& c) {
        c.set_auth(cfg_.munge_socket, [this](Harmonics__Role r, std::uint32_t uid) { return authorize_hook(r, uid); },
                   "harmonics-schedd " + leaf_name_);
        c.on_frame([this](wire::Connection& cc, wire::EnvelopePtr env) { on_hook_frame(cc, std::move(env)); });
        c.on_closed([this](wire::Connection& cc, const std::string& why) {
            HLOG_DEBUG("hook %s closed: %s", cc.peer().c_str(), why.c_str());
            on_hook_closed(cc);
        });
    });
    if (!hooks_->listen(listen_, err)) return false;

    std::string coord = opts_.coord.empty() ? cfg_.coord_address : opts_.coord;
    if (coord != "none") {
        wire::ConnLimits clim = lim;
        clim.idle_timeout_s = 0;   // we send every epoch; coordd's silence is not an error
        coord_ = std::make_unique<wire::Dialer>(base_, coord, HARMONICS__ROLE__ROLE_SCHEDD,
                                                "schedd " + leaf_name_, cfg_.munge_socket, clim, &counters_);
        coord_->max_backoff_s = coordd_retry_max_s(cfg_);
        coord_->on_up([this](wire::Connection& c) { on_coord_up(c); });
        coord_->on_down([this](const std::string& why) {
            HLOG_WARN("coordd connection lost (%s); keeping the last cross-leaf decisions", why.c_str());
        });
        coord_->on_frame([this](wire::Connection& c, wire::EnvelopePtr env) { on_coord_frame(c, std::move(env)); });
        coord_->start();
    }

    epoch_ev_ = event_new(base_, -1, EV_PERSIST, epoch_cb, this);
    timeval tv = to_timeval(cfg_.epoch_s);
    event_add(epoch_ev_, &tv);
    soon_ev_ = event_new(base_, -1, 0, soon_cb, this);
    react_ev_ = event_new(base_, -1, 0, react_cb, this);
    rng_.seed(std::hash<std::string>{}(leaf_name_) ^ std::uint64_t(getpid()) ^ std::uint64_t(wall_s() * 1e6));
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) {
        event* e = evsignal_new(base_, sig, signal_cb, this);
        event_add(e, nullptr);
        signal_evs_.push_back(e);
    }
    std::signal(SIGPIPE, SIG_IGN);
    HLOG_INFO("serving leaf %s on %s (port %d), coordd %s, epoch %.3f s", leaf_name_.c_str(), listen_.c_str(),
              hooks_->bound_port(), coord.c_str(), cfg_.epoch_s);
    return true;
}

int Schedd::run() {
    event_base_dispatch(base_);
    HLOG_INFO("shutting down: %llu reports, %llu decisions, %llu bad frames, %llu refused",
              (unsigned long long)reports(), (unsigned long long)decisions_,
              (unsigned long long)counters_.bad_frames, (unsigned long long)counters_.refused);
    return 0;
}

void Schedd::stop() {
    if (hooks_) hooks_->close_all("shutting down");
    event_base_loopexit(base_, nullptr);
}

void Schedd::signal_cb(int sig, short, void* arg) {
    auto* self = static_cast<Schedd*>(arg);
    if (sig == SIGHUP) {
        self->reload();
    } else if (sig == SIGUSR1) {
        const wire::Counters& c = self->counters_;
        HLOG_INFO("stats: leaf=%s epoch=%llu jobs=%zu hooks=%zu reports=%llu decisions=%llu accepted=%llu "
                  "refused=%llu bad_frames=%llu idle_closed=%llu overflow_closed=%llu",
                  self->leaf_name_.c_str(), (unsigned long long)self->epoch_, self->jobs_.size(),
                  self->hooks_->connections(), (unsigned long long)self->reports(),
                  (unsigned long long)self->decisions_, (unsigned long long)c.accepted,
                  (unsigned long long)c.refused, (unsigned long long)c.bad_frames,
                  (unsigned long long)c.idle_closed, (unsigned long long)c.overflow_closed);
    } else {
        HLOG_INFO("signal %d: shutting down", sig);
        self->stop();
    }
}

void Schedd::reload() {
    HarmonicsConfig cfg;
    Topology topo;
    SwitchId leaf = -1;
    std::string listen, err;
    log_reopen();
    if (!load_config(&cfg, &topo, &leaf, &listen, &err)) {
        HLOG_ERROR("SIGHUP: keeping the old configuration: %s", err.c_str());
        return;
    }
    if (topo.sw(leaf).name != leaf_name_) {
        HLOG_ERROR("SIGHUP: keeping the old configuration: the new one makes this schedd serve %s instead of %s",
                   topo.sw(leaf).name.c_str(), leaf_name_.c_str());
        return;
    }
    if (listen != listen_) HLOG_WARN("SIGHUP: listen address %s -> %s needs a restart", listen_.c_str(), listen.c_str());
    std::string coord = opts_.coord.empty() ? cfg.coord_address : opts_.coord;
    if (coord_) coord_->set_address(coord);
    double old_epoch = cfg_.epoch_s;
    leaf_ = leaf;
    apply_config(std::move(cfg), std::move(topo));
    if (cfg_.epoch_s != old_epoch) {
        timeval tv = to_timeval(cfg_.epoch_s);
        event_add(epoch_ev_, &tv);
    }
    HLOG_INFO("SIGHUP: configuration reloaded from %s (epoch %.3f s)", cfg_.path.c_str(), cfg_.epoch_s);
    decide_soon();
}

// ---- hooks -----------------------------------------------------------------

std::string Schedd::authorize_hook(Harmonics__Role role, std::uint32_t) {
    // Which jobs a uid may report for is checked per registration.
    if (role != HARMONICS__ROLE__ROLE_HOOK) return "only hooks connect to a schedd";
    return "";
}

bool Schedd::may_report(const SchedJob& j, std::uint32_t uid) const {
    if (uid == 0 || (slurm_uid_known_ && uid == slurm_uid_)) return true;
    return j.uid_source == UidSource::None || j.uid == uid;
}

void Schedd::refuse(wire::Connection& c, const std::string& why) {
    counters_.refused++;
    HLOG_WARN("refused hook %s (uid %u, %s): %s", c.peer().c_str(), c.uid(), c.name().c_str(), why.c_str());
    c.send_error(why);
    c.close("refused: " + why, true);
}

void Schedd::on_hook_frame(wire::Connection& c, wire::EnvelopePtr env) {
    switch (env->body_case) {
    case HARMONICS__ENVELOPE__BODY_HOOK_REGISTER: handle_register(c, *env->hook_register); break;
    case HARMONICS__ENVELOPE__BODY_PROFILE_REPORT: handle_report(c, *env->profile_report); break;
    default: refuse(c, "unexpected message from a hook"); break;
    }
}

void Schedd::handle_register(wire::Connection& c, const Harmonics__HookRegister& r) {
    auto it = jobs_.find(r.job_id);
    if (it == jobs_.end()) {
        if (jobs_.size() >= opts_.max_jobs) {
            refuse(c, "schedd job table full (" + std::to_string(opts_.max_jobs) + " jobs)");
            return;
        }
        it = jobs_.try_emplace(r.job_id).first;
        it->second.id = r.job_id;
        it->second.agg = JobAggregate(opts_.max_ranks_per_job);
    }
    SchedJob& j = it->second;
    if (!may_report(j, c.uid())) {
        refuse(c, "job " + std::to_string(r.job_id) + " belongs to uid " + std::to_string(j.uid) + ", not uid " +
                      std::to_string(c.uid()));
        return;
    }
    if (std::find(c.jobs.begin(), c.jobs.end(), r.job_id) == c.jobs.end()) {
        if (c.jobs.size() >= opts_.max_comms_per_conn) {
            refuse(c, "too many jobs on one connection");
            return;
        }
        c.jobs.push_back(r.job_id);
    }
    if (j.uid_source == UidSource::None && c.uid() != 0 && !(slurm_uid_known_ && c.uid() == slurm_uid_)) {
        // coordd has not told us yet: the first user to report claims the job;
        // coordd's word later evicts a wrong claim.
        j.uid = c.uid();
        j.uid_source = UidSource::Claimed;
    }
    if (r.node && *r.node && j.local_nodes.size() < opts_.max_ranks_per_job) j.local_nodes.insert(r.node);
    if (r.has_n_nodes && r.n_nodes > 0) j.n_nodes = r.n_nodes;
    j.hooks.insert(c.id());
    if (j.decision || j.fixed) push_schedule(j, wall_s());
}

void Schedd::handle_report(wire::Connection& c, const Harmonics__ProfileReport& r) {
    if (std::find(c.jobs.begin(), c.jobs.end(), r.job_id) == c.jobs.end()) {
        refuse(c, "report for job " + std::to_string(r.job_id) + " not registered on this connection");
        return;
    }
    auto it = jobs_.find(r.job_id);
    if (it == jobs_.end()) return;   // ended while the report was in flight
    SchedJob& j = it->second;
    RankSample s;
    s.period_s = r.period_s;
    s.received_s = mono_s();
    for (std::size_t k = 0; k < r.n_phases && k <= JobAggregate::kMaxPhases; ++k) {
        const Harmonics__PhaseReport* p = r.phases[k];
        s.phases.push_back({p->start_offset_s, p->duration_s, p->has_bytes ? double(p->bytes) : 0.0,
                            p->has_held_s ? p->held_s : 0.0});
    }
    if (!j.agg.add(r.rank, std::move(s))) {
        HLOG_DEBUG("job %lld rank %d: unusable report dropped", (long long)r.job_id, r.rank);
        return;
    }
    reports_.fetch_add(1, std::memory_order_relaxed);
    j.last_report_s = mono_s();
    if (r.has_holds && !r.holds) j.not_holding[r.rank] = j.last_report_s;
    else j.not_holding.erase(r.rank);
    update_holds(j, j.last_report_s);
    if (r.has_clock_offset_s && !j.clock_seen) {
        // Schedules are absolute times: a hook whose clock is off ours by
        // more than ClockTolerance opens its gates at the wrong moments.
        j.clock_seen = true;
        if (std::fabs(r.clock_offset_s) > cfg_.clock_tolerance_s)
            HLOG_WARN("job %lld rank %d: clock %.3f ms off this schedd's, beyond ClockTolerance %.3f ms (check NTP/PTP)",
                      (long long)r.job_id, r.rank, r.clock_offset_s * 1e3, cfg_.clock_tolerance_s * 1e3);
        else
            HLOG_DEBUG("job %lld rank %d: clock offset %.3f ms", (long long)r.job_id, r.rank, r.clock_offset_s * 1e3);
    }
    if (!j.summary) {
        // Arrival: the job has a rhythm now; decide without waiting for the epoch.
        j.summary = j.agg.summarize(j.last_report_s, fresh_s());
        HLOG_INFO("job %lld arrived (period %.1f ms)", (long long)j.id, j.summary ? j.summary->period_s * 1e3 : 0);
        decide_soon();
    }
}

void Schedd::on_hook_closed(wire::Connection& c) {
    for (std::int64_t id : c.jobs) {
        auto it = jobs_.find(id);
        if (it != jobs_.end()) it->second.hooks.erase(c.id());
    }
}

// ---- scheduling ------------------------------------------------------------

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
        if (used <= local_->tuning().slack_margin + 1e-12) continue;
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

// ---- coordd ----------------------------------------------------------------

void Schedd::fill_leaf_job(const SchedJob& j, Harmonics__LeafJob* lj, Harmonics__Schedule* sch,
                           std::string* nodes) const {
    lj->job_id = j.id;
    if (j.summary) {
        lj->has_period_s = 1;
        lj->period_s = j.summary->period_s;
    }
    lj->has_uplink_load = 1;
    lj->uplink_load = j.uplink_load;
    lj->has_ranks_reporting = 1;
    lj->ranks_reporting = int(j.agg.ranks());
    if (j.uid_source != UidSource::None) {
        lj->has_uid = 1;
        lj->uid = j.uid;
    }
    *nodes = compress_hostlist(std::vector<std::string>(j.local_nodes.begin(), j.local_nodes.end()));
    lj->nodes = const_cast<char*>(nodes->c_str());
    if (j.n_nodes > 0) {
        lj->has_n_nodes = 1;
        lj->n_nodes = j.n_nodes;
    }
    if (j.decision && j.decision->gated && is_cross_leaf(j)) {
        lj->has_slack_used = 1;
        lj->slack_used = j.slack_used;
    }
    if (j.adopt) {
        lj->has_adopt = 1;
        lj->adopt = 1;
    }
    if (!j.holds) {
        lj->has_holds = 1;
        lj->holds = 0;
    }
    if (j.decision && owns(j)) {
        // An owner only for cross-leaf jobs: a leaf-local job is no one else's business.
        wire::fill_schedule(sch, j.id, *j.decision, j.decision_epoch, is_cross_leaf(j) ? leaf_name_.c_str() : "");
        lj->decision = sch;
    }
}

// The job's aggregated phases into lj; the reports live in *reports (and
// the pointers to them in *ptrs) until lj is packed.
void Schedd::fill_phases(const SchedJob& j, Harmonics__LeafJob* lj, std::vector<Harmonics__PhaseReport>* reports,
                         std::vector<Harmonics__PhaseReport*>* ptrs) const {
    if (!j.summary) return;
    for (const PhaseSample& p : j.summary->phases) {
        Harmonics__PhaseReport r = HARMONICS__PHASE_REPORT__INIT;
        r.start_offset_s = p.start_offset_s;
        r.duration_s = p.duration_s;
        r.has_bytes = 1;
        r.bytes = std::uint64_t(p.bytes);
        reports->push_back(r);
    }
    for (auto& r : *reports) ptrs->push_back(&r);
    lj->n_phases = ptrs->size();
    lj->phases = ptrs->data();
}

// The phases go with every job: a restarted coordd plans phase families from them.
void Schedd::fill_leaf_jobs(LeafJobsOut* out) const {
    const std::size_t n = jobs_.size();
    out->ljs.resize(n);
    out->schs.resize(n);
    out->nodes.resize(n);
    out->phs.resize(n);
    out->php.resize(n);
    out->ptrs.clear();
    std::size_t k = 0;
    for (const auto& [id, j] : jobs_) {
        out->ljs[k] = HARMONICS__LEAF_JOB__INIT;
        out->schs[k] = HARMONICS__SCHEDULE__INIT;
        fill_leaf_job(j, &out->ljs[k], &out->schs[k], &out->nodes[k]);
        fill_phases(j, &out->ljs[k], &out->phs[k], &out->php[k]);
        out->ptrs.push_back(&out->ljs[k]);
        ++k;
    }
}

void Schedd::send_proposal() {
    wire::Connection* c = coord_ ? coord_->conn() : nullptr;
    if (!c) return;
    LeafJobsOut out;
    fill_leaf_jobs(&out);
    Harmonics__LeafProposal p = HARMONICS__LEAF_PROPOSAL__INIT;
    p.leaf = const_cast<char*>(leaf_name_.c_str());
    p.epoch = epoch_;
    p.n_jobs = out.ptrs.size();
    p.jobs = out.ptrs.data();
    p.has_predicted_cost = p.has_decide_wall_s = 1;
    p.predicted_cost = last_predicted_cost_;
    p.decide_wall_s = last_decide_wall_s_;
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_LEAF_PROPOSAL;
    env.leaf_proposal = &p;
    c->send(env);
}

void Schedd::on_coord_up(wire::Connection& c) {
    HLOG_INFO("registered with coordd %s", c.peer().c_str());
    // Registration carries everything we know, so a restarted coordd rebuilds
    // its table (owners included) from the schedds.
    LeafJobsOut out;
    fill_leaf_jobs(&out);
    std::vector<Harmonics__LeafJob>& ljs = out.ljs;
    std::size_t k = 0;
    for (const auto& [id, j] : jobs_) {
        // Coordd's memory of hand-overs: a restarted one has lost it.
        if (j.adopted) {
            ljs[k].has_adopted = 1;
            ljs[k].adopted = 1;
        }
        if (j.handed_over) {
            ljs[k].has_handed_over = 1;
            ljs[k].handed_over = 1;
        }
        // Also remember decisions of jobs others own: coordd may have lost them
        // (a free one only if coordd's own: a phase family's free rider).
        if (!ljs[k].decision && j.decision && (j.decision->gated || j.owner_leaf == wire::kCoordinatorOwner)) {
            wire::fill_schedule(&out.schs[k], j.id, *j.decision, j.decision_epoch, j.owner_leaf.c_str());
            ljs[k].decision = &out.schs[k];
        }
        ++k;
    }
    std::string listen = listen_;
    Harmonics__ScheddRegister r = HARMONICS__SCHEDD_REGISTER__INIT;
    r.leaf = const_cast<char*>(leaf_name_.c_str());
    r.listen = const_cast<char*>(listen.c_str());
    r.has_epoch = 1;
    r.epoch = epoch_;
    r.n_jobs = out.ptrs.size();
    r.jobs = out.ptrs.data();
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_SCHEDD_REGISTER;
    env.schedd_register = &r;
    c.send(env);
}

void Schedd::on_coord_frame(wire::Connection& c, wire::EnvelopePtr env) {
    if (env->body_case == HARMONICS__ENVELOPE__BODY_LEAF_ASSIGNMENT) {
        apply_assignment(*env->leaf_assignment);
    } else if (env->body_case == HARMONICS__ENVELOPE__BODY_ERROR) {
        HLOG_WARN("coordd says: %s", env->error->reason);
    } else {
        HLOG_WARN("unexpected message %d from coordd %s", int(env->body_case), c.peer().c_str());
    }
}

void Schedd::apply_assignment(const Harmonics__LeafAssignment& a) {
    bool ended = false, changed = false;
    for (std::size_t i = 0; i < a.n_ended; ++i) {
        auto it = jobs_.find(a.ended[i]);
        if (it == jobs_.end()) continue;
        HLOG_INFO("job %lld ended (coordd)", (long long)a.ended[i]);
        jobs_.erase(it);
        ended = true;
    }
    for (std::size_t i = 0; i < a.n_jobs; ++i) {
        const Harmonics__JobInfo* ji = a.jobs[i];
        auto it = jobs_.find(ji->job_id);
        if (it == jobs_.end()) {
            if (jobs_.size() >= opts_.max_jobs) continue;
            it = jobs_.try_emplace(ji->job_id).first;
            it->second.id = ji->job_id;
            it->second.agg = JobAggregate(opts_.max_ranks_per_job);
            it->second.last_report_s = mono_s();
        }
        SchedJob& j = it->second;
        j.known_to_coordd = true;
        if (ji->has_uid) {
            j.uid = ji->uid;
            j.uid_source = UidSource::Coordd;
            // Hooks that claimed the job under another uid go now.
            for (std::uint64_t cid : std::vector<std::uint64_t>(j.hooks.begin(), j.hooks.end())) {
                wire::Connection* c = hooks_->find(cid);
                if (c && !may_report(j, c->uid())) {
                    j.hooks.erase(cid);
                    refuse(*c, "job " + std::to_string(j.id) + " belongs to uid " + std::to_string(j.uid));
                }
            }
        }
        j.nodes_complete = ji->has_nodes_complete && ji->nodes_complete;
        if (ji->node_list && *ji->node_list && j.nodes_complete) {
            try {
                j.all_nodes = expand_hostlist(ji->node_list);
            } catch (const std::exception& e) {
                HLOG_WARN("coordd sent job %lld a bad node list: %s", (long long)j.id, e.what());
            }
        }
        j.leaves.assign(ji->leaves, ji->leaves + ji->n_leaves);
        std::string owner = ji->owner_leaf ? ji->owner_leaf : "";
        if (owner != j.owner_leaf) changed = true;
        j.owner_leaf = owner;
        const bool run_free = ji->has_run_free && ji->run_free;
        if (run_free != j.run_free) {
            changed = true;
            HLOG_INFO("job %lld: coordd says it runs %s on every leaf", (long long)j.id, run_free ? "free" : "gated again");
        }
        j.run_free = run_free;
        j.holds_elsewhere = !ji->has_holds || ji->holds;
        j.adopted = ji->has_adopted && ji->adopted;
        j.handed_over = ji->has_handed_over && ji->handed_over;
        if (ji->decision && owner != leaf_name_) {
            JobDecision d = wire::decision_of(*ji->decision);
            if (!j.fixed || !same_gate(*j.fixed, d)) changed = true;
            j.fixed = d;
            j.fixed_epoch = ji->decision->has_epoch ? ji->decision->epoch : 0;
        }
    }
    if (ended) decide_soon();
    if (changed) react_soon();
}

}  // namespace harmonics::sched
