// harmonics-coordd: start, reload and stop; the connections of schedds,
// hooks and harmonicsctl; the jobs' table, from job events and the schedds'
// proposals and registrations.
#include "coordd.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "config/policy_options.h"
#include "policy/phase_groups.h"
#include "sched/job_profile.h"
#include "state/leaf_summary.h"
#include "topology/hostlist.h"
#include "util/clock.h"
#include "util/log.h"
#include "wire/schedule_msg.h"

namespace harmonics::coord {

namespace {

// ", time limit ends in 3600 s" for the job-started line.
std::string time_left_text(double end_time_s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", time limit ends in %.0f s", end_time_s - wall_s());
    return buf;
}

}  // namespace

Coordd::Coordd(CoordOptions opts) : opts_(std::move(opts)) {}

Coordd::~Coordd() {
    tcp_.reset();
    unix_.reset();
    slurm_.reset();
    for (event* e : signal_evs_) event_free(e);
    if (tick_ev_) event_free(tick_ev_);
    if (slurm_ev_) event_free(slurm_ev_);
    if (comment_ev_) event_free(comment_ev_);
    if (base_) event_base_free(base_);
}

bool Coordd::load_config(HarmonicsConfig* cfg, Topology* topo, std::string* err) {
    try {
        *cfg = parse_harmonics_conf(opts_.config_path);
        *topo = load_topology(*cfg);
    } catch (const std::exception& e) {
        *err = e.what();
        return false;
    }
    return true;
}

bool Coordd::start(std::string* err) {
    if (!load_config(&cfg_, &topo_, err)) return false;
    log_set_level(cfg_.log_level);
    if (passwd* pw = getpwnam(cfg_.slurm_user.c_str())) {
        slurm_uid_ = pw->pw_uid;
        slurm_uid_known_ = true;
    }
    for (SwitchId s : topo_.leaves()) leaves_[topo_.sw(s).name].name = topo_.sw(s).name;
    listen_ = opts_.listen.empty() ? cfg_.coord_address : opts_.listen;
    socket_ = opts_.socket.empty() ? cfg_.coord_socket : opts_.socket;
    state_file_ = opts_.state_file.empty() ? cfg_.state_file : opts_.state_file;
    started_ = mono_s();

    evthread_use_pthreads();   // the Slurm worker wakes the loop
    wire::ConnLimits lim;
    if (!wire::open_daemon_loop(cfg_.max_frame_bytes, opts_.idle_timeout_s, &base_, &lim, err)) return false;
    tcp_ = std::make_unique<wire::Listener>(base_, lim, &counters_);
    unix_ = std::make_unique<wire::Listener>(base_, lim, &counters_);
    tcp_->on_accept([this](wire::Connection& c) { accept(tcp_.get(), c); });
    unix_->on_accept([this](wire::Connection& c) { accept(unix_.get(), c); });
    if (listen_ != "none" && !tcp_->listen(listen_, err)) return false;
    if (socket_ != "none") {
        std::string dir = socket_.substr(0, socket_.rfind('/'));
        if (!dir.empty()) ::mkdir(dir.c_str(), 0755);
        if (!unix_->listen(socket_, err)) return false;
    }

    tick_ev_ = event_new(base_, -1, EV_PERSIST, tick_cb, this);
    timeval tv = to_timeval(cfg_.epoch_s);
    event_add(tick_ev_, &tv);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        event* e = evsignal_new(base_, sig, signal_cb, this);
        event_add(e, nullptr);
        signal_evs_.push_back(e);
    }
    std::signal(SIGPIPE, SIG_IGN);

    std::string why;
    bool want = opts_.slurm == "yes" || (opts_.slurm == "auto" && SlurmLink::usable(opts_.slurm_conf, &why));
    if (want) {
        slurm_ev_ = event_new(base_, -1, 0, slurm_cb, this);
        comment_ev_ = event_new(base_, -1, 0, comment_cb, this);
        slurm_ = std::make_unique<SlurmLink>(opts_.slurm_conf, 20.0, [this] { event_active(slurm_ev_, 0, 0); });
        slurm_->start();
        slurm_->request_load();
        load_requested_ = mono_s();
        HLOG_INFO("rebuilding the job table from slurmctld (slurm_load_jobs)");
    } else {
        HLOG_INFO("no Slurm link (%s); the job table comes from harmonics-notify and the schedds",
                  why.empty() ? "disabled" : why.c_str());
    }
    HLOG_INFO("listening on %s (port %d) and %s; %zu leaves; state file %s", listen_.c_str(), tcp_->bound_port(),
              socket_.c_str(), leaves_.size(), state_file_.c_str());
    return true;
}

int Coordd::run() {
    event_base_dispatch(base_);
    HLOG_INFO("shutting down: %llu job events, %llu bad frames, %llu refused", (unsigned long long)events_,
              (unsigned long long)counters_.bad_frames, (unsigned long long)counters_.refused);
    return 0;
}

void Coordd::stop() {
    tcp_->close_all("shutting down");
    unix_->close_all("shutting down");
    event_base_loopexit(base_, nullptr);
}

void Coordd::signal_cb(int sig, short, void* arg) {
    auto* self = static_cast<Coordd*>(arg);
    if (sig == SIGHUP) {
        self->reload();
        return;
    }
    HLOG_INFO("signal %d: shutting down", sig);
    self->stop();
}

void Coordd::reload() {
    HarmonicsConfig cfg;
    Topology topo;
    std::string err;
    log_reopen();
    if (!load_config(&cfg, &topo, &err)) {
        HLOG_ERROR("SIGHUP: keeping the old configuration: %s", err.c_str());
        return;
    }
    cfg_ = std::move(cfg);
    topo_ = std::move(topo);
    log_set_level(cfg_.log_level);
    for (SwitchId s : topo_.leaves()) leaves_[topo_.sw(s).name].name = topo_.sw(s).name;
    timeval tv = to_timeval(cfg_.epoch_s);
    event_add(tick_ev_, &tv);
    HLOG_INFO("SIGHUP: configuration reloaded from %s", cfg_.path.c_str());
}

// ---- connections -----------------------------------------------------------

std::string Coordd::authorize(Harmonics__Role role, std::uint32_t uid) const {
    bool trusted = uid == 0 || (slurm_uid_known_ && uid == slurm_uid_);
    switch (role) {
    case HARMONICS__ROLE__ROLE_SCHEDD:
    case HARMONICS__ROLE__ROLE_NOTIFY:
        return trusted ? "" : "uid " + std::to_string(uid) + " is neither root nor SlurmUser " + cfg_.slurm_user;
    case HARMONICS__ROLE__ROLE_CTL: return "";   // read-only queries
    default: return "role not served by coordd";
    }
}

void Coordd::accept(wire::Listener* via, wire::Connection& c) {
    c.set_auth(cfg_.munge_socket, [this](Harmonics__Role r, std::uint32_t uid) { return authorize(r, uid); },
               "harmonics-coordd");
    c.on_frame([this, via](wire::Connection& cc, wire::EnvelopePtr env) { on_frame(via, cc, std::move(env)); });
    c.on_closed([this](wire::Connection& cc, const std::string& why) {
        HLOG_DEBUG("%s closed: %s", cc.peer().c_str(), why.c_str());
        on_closed(cc);
    });
}

void Coordd::on_closed(wire::Connection& c) {
    for (auto& [name, l] : leaves_)
        if (l.conn == c.id() && l.via && l.via->find(c.id()) == nullptr) {
            HLOG_WARN("schedd of leaf %s disconnected", name.c_str());
            l.conn = 0;
            l.via = nullptr;
        }
}

void Coordd::on_frame(wire::Listener* via, wire::Connection& c, wire::EnvelopePtr env) {
    auto refuse = [&](const char* what) {
        counters_.refused++;
        HLOG_WARN("refused %s (uid %u): %s", c.peer().c_str(), c.uid(), what);
        c.send_error(what);
        c.close(what, true);
    };
    Harmonics__Role role = c.role();
    switch (env->body_case) {
    case HARMONICS__ENVELOPE__BODY_JOB_EVENT:
        if (role != HARMONICS__ROLE__ROLE_NOTIFY) return refuse("job events only from the notify role");
        handle_job_event(c, *env->job_event);
        break;
    case HARMONICS__ENVELOPE__BODY_SCHEDD_REGISTER:
        if (role != HARMONICS__ROLE__ROLE_SCHEDD) return refuse("registration only from a schedd");
        handle_register(via, c, *env->schedd_register);
        break;
    case HARMONICS__ENVELOPE__BODY_LEAF_PROPOSAL:
        if (role != HARMONICS__ROLE__ROLE_SCHEDD) return refuse("proposals only from a schedd");
        handle_proposal(c, *env->leaf_proposal);
        break;
    case HARMONICS__ENVELOPE__BODY_CTL_QUERY: handle_query(c, *env->ctl_query); break;
    default: refuse("unexpected message"); break;
    }
}

wire::Connection* Coordd::leaf_conn(const std::string& leaf) {
    auto it = leaves_.find(leaf);
    if (it == leaves_.end() || !it->second.conn || !it->second.via) return nullptr;
    return it->second.via->find(it->second.conn);
}

// ---- jobs ------------------------------------------------------------------

CoordJob& Coordd::job(JobId id) {
    auto [it, fresh] = jobs_.try_emplace(id);
    if (fresh) {
        it->second.id = id;
        it->second.seen_at = mono_s();
    }
    return it->second;
}

void Coordd::set_nodes(CoordJob& j, const std::string& node_list) {
    if (node_list.empty()) return;
    try {
        std::vector<std::string> nodes = expand_hostlist(node_list);
        j.nodes = nodes;
        j.node_list = compress_hostlist(nodes);
        j.nodes_from_slurm = true;
        j.leaves.clear();
        for (const std::string& n : nodes)
            if (SwitchId l = leaf_of_host(topo_, n); l >= 0) j.leaves.insert(topo_.sw(l).name);
    } catch (const std::exception& e) {
        HLOG_WARN("job %lld: bad node list '%s': %s", (long long)j.id, node_list.c_str(), e.what());
    }
}

std::string Coordd::job_state(const CoordJob& j) const {
    if (j.ended) return "ended";
    // locked: measuring only, planned where its bursts lock behind gated ones.
    if (j.decision && j.decision->gated) return j.holds ? "scheduled" : "locked";
    if (j.views.empty()) return "waiting";
    return j.holds ? "free" : "measuring";   // measuring: free, since its ranks do not hold their collectives
}

void Coordd::handle_job_event(wire::Connection& c, const Harmonics__JobEvent& e) {
    events_++;
    Harmonics__JobEventAck ack = HARMONICS__JOB_EVENT_ACK__INIT;
    ack.job_id = e.job_id;
    ack.ok = 1;
    if (e.state == HARMONICS__JOB_STATE__JOB_STARTED) {
        if (jobs_.size() >= opts_.max_jobs && !jobs_.count(e.job_id)) {
            ack.ok = 0;
            ack.reason = const_cast<char*>("coordd job table full");
        } else {
            CoordJob& j = job(e.job_id);
            j.uid = e.uid;
            j.has_uid = j.uid_from_slurm = true;
            j.ended = false;
            set_nodes(j, e.node_list ? e.node_list : "");
            // An event without one (harmonics-notify) keeps what slurm_load_jobs
            // gave, or asks slurmctld once the job's prolog is over. One whose
            // sender saw the limit replaces it, none included (a job requeued
            // and started again without one).
            const bool known = e.has_end_time_known && e.end_time_known;
            if (known) j.end_time_s = 0;
            if (e.has_end_time_s && e.end_time_s > 0) j.end_time_s = e.end_time_s;
            j.end_known = j.end_known || known || j.end_time_s > 0;
            const bool ask = !known && j.end_time_s <= 0 && slurm_;
            if (ask) slurm_->request_end_time(j.id);
            HLOG_INFO("job %lld started (uid %u, nodes %s, leaves %zu%s)", (long long)j.id, j.uid, j.node_list.c_str(),
                      j.leaves.size(),
                      j.end_time_s > 0 ? time_left_text(j.end_time_s).c_str()
                      : ask            ? ", time limit asked of slurmctld"
                                       : ", no time limit");
            assign_owners();
            notify_leaves(j);
            comment_soon();
        }
    } else if (e.state == HARMONICS__JOB_STATE__JOB_ENDED) {
        auto it = jobs_.find(e.job_id);
        if (it != jobs_.end() && !it->second.ended) {
            CoordJob& j = it->second;
            HLOG_INFO("job %lld ended (%s, exit %d)", (long long)j.id, e.reason ? e.reason : "-",
                      e.has_exit_code ? e.exit_code : 0);
            end_job(j);
        }
    }
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_JOB_EVENT_ACK;
    env.job_event_ack = &ack;
    c.send(env);
}

void Coordd::merge_leaf_job(const std::string& leaf, const Harmonics__LeafJob& lj, bool registering) {
    auto it = jobs_.find(lj.job_id);
    if (it == jobs_.end() && jobs_.size() >= opts_.max_jobs) return;
    CoordJob& j = job(lj.job_id);
    if (j.ended) return;
    if (lj.has_uid && !j.uid_from_slurm) {
        j.uid = lj.uid;
        j.has_uid = true;
    }
    if (!j.nodes_from_slurm) {
        // Slurm has not told us the node list: the union of what the schedds see.
        if (j.leaves.insert(leaf).second && j.leaves.size() > 1 && j.owner.empty()) owners_stale_ = true;
        if (lj.nodes && *lj.nodes) {
            try {
                for (const std::string& n : expand_hostlist(lj.nodes))
                    if (std::find(j.nodes.begin(), j.nodes.end(), n) == j.nodes.end()) j.nodes.push_back(n);
                j.node_list = compress_hostlist(j.nodes);
            } catch (const std::exception&) {
            }
        }
    }
    if (j.views.empty()) comment_soon();   // waiting -> free
    LeafView& v = j.views[leaf];
    if (v.period_s <= 0 && lj.has_period_s && lj.period_s > 0 && j.leaves.size() > 1) groups_stale_ = true;
    v.period_s = lj.has_period_s ? lj.period_s : 0;
    v.uplink_load = lj.has_uplink_load ? lj.uplink_load : 0;
    v.ranks = lj.has_ranks_reporting ? lj.ranks_reporting : 0;
    v.slack_used = lj.has_slack_used && leaf_settled(leaf) ? lj.slack_used : 0;
    v.adopt = lj.has_adopt && lj.adopt && leaf_settled(leaf);
    v.holds = !lj.has_holds || lj.holds;
    v.iteration_start_s = lj.has_iteration_start_s && lj.iteration_start_s > 0 ? lj.iteration_start_s : 0;
    update_holds(j);
    if (leaf == j.owner || (j.owner.empty() && j.leaves.size() <= 1)) note_outran(j, leaf, lj, registering);
    v.phases.clear();
    for (std::size_t k = 0; k < lj.n_phases && k < sched::JobAggregate::kMaxPhases; ++k)
        v.phases.push_back({lj.phases[k]->start_offset_s, lj.phases[k]->duration_s,
                            lj.phases[k]->has_bytes ? double(lj.phases[k]->bytes) : 0.0});
    const Harmonics__Schedule* s = lj.decision;
    if (!s) return;
    std::string owner = s->owner_leaf ? s->owner_leaf : "";
    if (owner.empty()) {
        // A leaf-local job: its schedd's decision, kept for harmonicsctl.
        if (j.leaves.size() <= 1) {
            JobDecision d = wire::decision_of(*s);
            if (!j.decision || !same_gate(*j.decision, d)) comment_soon();
            j.decision = d;
            j.decision_epoch = s->has_epoch ? s->epoch : 0;
        }
        return;
    }
    // After a coordd restart the schedds remember who owned what, and which
    // jobs were handed over (every leaf of the job was told).
    if (registering && j.owner.empty() && !owner.empty()) j.owner = owner;
    if (registering && lj.has_handed_over && lj.handed_over) j.reowned = true;
    if (registering && lj.has_adopted && lj.adopted) j.adopted = true;
    if (owner == leaf && j.owner == leaf) {
        JobDecision d = wire::decision_of(*s);
        if (!j.decision || !same_gate(*j.decision, d)) {
            j.decision = d;
            j.decision_epoch = s->has_epoch ? s->epoch : 0;
            if (j.leaves.size() > 1) notify_leaves(j);
            comment_soon();
        } else {
            j.decision->slack_margin = d.slack_margin;   // the same gate, held to another share of its slack
        }
    } else if (registering && !j.decision && j.owner == owner && !owner.empty()) {
        // A non-owner kept the owner's decision through our restart.
        JobDecision d = wire::decision_of(*s);
        j.decision = d;
        j.decision_epoch = s->has_epoch ? s->epoch : 0;
        comment_soon();
    }
}

// The deciding leaf's word on whether it runs the job free for outrunning
// its period (harmonics-schedd's watch_outrunning), kept for harmonicsctl,
// the job's comment and check_adopt, and passed to the job's leaves (a
// restarted schedd keeps the hold). A registration says nothing of a hold
// it lacks: the schedd may have restarted and not know it yet; its next
// proposal does.
void Coordd::note_outran(CoordJob& j, const std::string& leaf, const Harmonics__LeafJob& lj, bool registering) {
    const double now = mono_s();
    const double until = lj.has_outran_for_s && lj.outran_for_s > 0 ? now + lj.outran_for_s : 0;
    if (registering && until == 0) return;
    if ((until > 0) != outran(j, now)) {
        if (until > 0)
            HLOG_INFO("job %lld: leaf %s runs it free for %.0f s: gated, it kept iterating past its period",
                      (long long)j.id, leaf.c_str(), lj.outran_for_s);
        comment_soon();
    }
    j.outran_until = until;
}

// A job holds while every leaf's ranks do. One that stops runs free on every
// leaf (its hooks are never held; its owner may still plan the point where
// its bursts lock behind gated ones), and leaves its phase family: windows
// are promises it cannot keep.
void Coordd::update_holds(CoordJob& j) {
    const bool holds = std::all_of(j.views.begin(), j.views.end(), [](const auto& v) { return v.second.holds; });
    if (holds == j.holds) return;
    j.holds = holds;
    if (!holds) {
        std::string where;
        for (const auto& [leaf, v] : j.views)
            if (!v.holds) where += (where.empty() ? "" : ",") + leaf;
        HLOG_INFO("job %lld: ranks on leaf %s do not hold their collectives (measuring only); it runs free on every "
                  "leaf%s (its owner may plan where it locks)",
                  (long long)j.id, where.c_str(), grouped(j) ? " and leaves its phase family" : "");
        if (grouped(j)) {
            j.owner.clear();
            j.decision.reset();
            assign_owners();
        }
    } else {
        HLOG_INFO("job %lld: every rank holds its collectives again; owner %s may gate it", (long long)j.id,
                  j.owner.empty() ? "-" : j.owner.c_str());
    }
    if (j.leaves.size() > 1) {
        settle_slack(j);
        notify_leaves(j);
    }
    comment_soon();
}

void Coordd::handle_register(wire::Listener* via, wire::Connection& c, const Harmonics__ScheddRegister& r) {
    auto it = leaves_.find(r.leaf);
    if (it == leaves_.end()) {
        counters_.refused++;
        HLOG_WARN("refused schedd %s: '%s' is not a leaf of %s", c.peer().c_str(), r.leaf, cfg_.topology_file.c_str());
        c.send_error(std::string("unknown leaf ") + r.leaf);
        c.close("unknown leaf", true);
        return;
    }
    LeafLink& l = it->second;
    if (wire::Connection* old = leaf_conn(l.name); old && old != &c) old->close("replaced by a new registration");
    l.conn = c.id();
    l.via = via;
    l.listen = r.listen ? r.listen : "";
    l.epoch = r.has_epoch ? r.epoch : 0;
    l.last_seen = mono_s();
    for (std::size_t i = 0; i < r.n_jobs; ++i) merge_leaf_job(l.name, *r.jobs[i], true);
    HLOG_INFO("schedd of leaf %s registered from %s with %zu jobs", l.name.c_str(), c.peer().c_str(), r.n_jobs);
    assign_owners();
    std::vector<JobId> mine;
    for (auto& [id, j] : jobs_)
        if (!j.ended && j.leaves.count(l.name)) mine.push_back(id);
    send_assignment(l.name, true, mine, {});
}

void Coordd::handle_proposal(wire::Connection& c, const Harmonics__LeafProposal& p) {
    auto it = leaves_.find(p.leaf);
    if (it == leaves_.end() || it->second.conn != c.id()) {
        HLOG_WARN("proposal for leaf %s from %s, which did not register it", p.leaf, c.peer().c_str());
        return;
    }
    LeafLink& l = it->second;
    l.epoch = p.epoch;
    l.last_seen = mono_s();
    l.predicted_cost = p.has_predicted_cost ? p.predicted_cost : 0;
    l.decide_wall_s = p.has_decide_wall_s ? p.decide_wall_s : 0;
    double load = 0;
    std::size_t before = jobs_.size();
    for (std::size_t i = 0; i < p.n_jobs; ++i) {
        merge_leaf_job(l.name, *p.jobs[i], false);
        if (p.jobs[i]->has_uplink_load) load += p.jobs[i]->uplink_load;
    }
    l.uplink_load = load;
    if (jobs_.size() != before || owners_stale_) assign_owners();
    if (groups_stale_) plan_groups();
    std::vector<JobId> ids;
    for (std::size_t i = 0; i < p.n_jobs; ++i) ids.push_back(p.jobs[i]->job_id);
    check_slack(ids);
    check_adopt(ids);
}

}  // namespace harmonics::coord
