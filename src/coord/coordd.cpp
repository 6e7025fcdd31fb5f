#include "coordd.h"

#include <event2/event.h>
#include <event2/thread.h>
#include <pwd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

#include "config.h"
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

namespace {

// Keeps the C strings a JobInfo points to alive while it is packed.
struct JobInfoBuf {
    Harmonics__JobInfo info = HARMONICS__JOB_INFO__INIT;
    Harmonics__Schedule sch = HARMONICS__SCHEDULE__INIT;
    std::vector<std::string> leaves;
    std::vector<char*> leaf_ptrs;
    std::string state;
};
void fill_info(JobInfoBuf& b, const CoordJob& j, const std::string& state) {
    b.info.job_id = j.id;
    if (j.has_uid) {
        b.info.has_uid = 1;
        b.info.uid = j.uid;
    }
    b.info.node_list = const_cast<char*>(j.node_list.c_str());
    b.info.has_nodes_complete = 1;
    b.info.nodes_complete = j.nodes_from_slurm;
    b.leaves.assign(j.leaves.begin(), j.leaves.end());
    for (auto& l : b.leaves) b.leaf_ptrs.push_back(const_cast<char*>(l.c_str()));
    b.info.n_leaves = b.leaf_ptrs.size();
    b.info.leaves = b.leaf_ptrs.data();
    b.info.owner_leaf = const_cast<char*>(j.owner.c_str());
    if (j.decision) {
        wire::fill_schedule(&b.sch, j.id, *j.decision, j.decision_epoch, j.owner.c_str());
        b.info.decision = &b.sch;
    }
    b.state = state;
    b.info.state = const_cast<char*>(b.state.c_str());
    if (runs_free(j)) {
        b.info.has_run_free = 1;
        b.info.run_free = 1;
    }
    if (!j.holds) {
        b.info.has_holds = 1;
        b.info.holds = 0;
    }
    if (j.adopted) {
        b.info.has_adopted = 1;
        b.info.adopted = 1;
    }
    if (j.reowned) {
        b.info.has_handed_over = 1;
        b.info.handed_over = 1;
    }
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
            HLOG_INFO("job %lld started (uid %u, nodes %s, leaves %zu)", (long long)j.id, j.uid, j.node_list.c_str(),
                      j.leaves.size());
            assign_owners();
            notify_leaves(j);
            comment_soon();
        }
    } else if (e.state == HARMONICS__JOB_STATE__JOB_ENDED) {
        auto it = jobs_.find(e.job_id);
        if (it != jobs_.end() && !it->second.ended) {
            CoordJob& j = it->second;
            j.ended = true;
            j.ended_at = mono_s();
            HLOG_INFO("job %lld ended (%s, exit %d)", (long long)j.id, e.reason ? e.reason : "-",
                      e.has_exit_code ? e.exit_code : 0);
            for (const std::string& l : j.leaves) send_assignment(l, false, {}, {j.id});
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
        j.leaves.insert(leaf);
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
    update_holds(j);
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
        }
    } else if (registering && !j.decision && j.owner == owner && !owner.empty()) {
        // A non-owner kept the owner's decision through our restart.
        JobDecision d = wire::decision_of(*s);
        j.decision = d;
        j.decision_epoch = s->has_epoch ? s->epoch : 0;
        comment_soon();
    }
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
    if (jobs_.size() != before) assign_owners();
    if (groups_stale_) plan_groups();
    std::vector<JobId> ids;
    for (std::size_t i = 0; i < p.n_jobs; ++i) ids.push_back(p.jobs[i]->job_id);
    check_slack(ids);
    check_adopt(ids);
}

// Each owner's slack rule covers its own leaf only. A gated cross-leaf job
// whose collisions with other gated jobs on another of its leaves take more
// than the share of its slack the rule allows would miss slots there for
// good. The first time, that leaf becomes its owner and plans it around the
// jobs fixed there; if it happens again, every leaf runs it free for a while
// (the simulator's Global Coordinator applies the same rule within one epoch,
// policy/global_coordinator.cpp).
void Coordd::check_slack(const std::vector<JobId>& ids) {
    const double margin = LocalTuning().slack_margin;
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
            if (v.slack_used > o.used) o = {v.slack_used, id, leaf};
        if (o.used > margin) over.push_back(o);
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
    for (JobId id : ids) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) continue;
        CoordJob& j = it->second;
        if (j.ended || runs_free(j) || j.reowned || grouped(j) || j.leaves.size() < 2 || !j.decision ||
            j.decision->gated || !settled(j))
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

// The job as the policy code sees it, from the first leaf that measured its
// period; false when none has measured its period and phases yet.
bool Coordd::profile_of(const CoordJob& j, JobProfile* p) const {
    sched::JobSummary sum;
    for (auto& [leaf, v] : j.views)
        if (v.period_s > 0 && (sum.period_s <= 0 || (sum.phases.empty() && !v.phases.empty()))) {
            sum.period_s = v.period_s;
            sum.phases = v.phases;
        }
    std::vector<SwitchId> lv;
    for (const std::string& n : j.leaves)
        if (SwitchId s = topo_.find_switch(n); s >= 0) lv.push_back(s);
    *p = sched::build_profile(topo_, j.id, j.nodes, lv, sum);
    return sum.period_s > 0 && !sum.phases.empty();
}

bool Coordd::grouped(const CoordJob& j) const { return j.owner == wire::kCoordinatorOwner; }

// Owners for cross-leaf jobs that have none. An owner is kept while the job
// runs: moving it would make the job's shift jump for no gain.
void Coordd::assign_owners() {
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
    const double now = mono_s();
    std::vector<JobProfile> profiles;
    std::vector<size_t> eligible;
    std::map<JobId, JobDecision> previous;
    std::map<JobId, SwitchId> owners;
    for (auto& [id, j] : jobs_) {
        if (j.ended || j.leaves.size() < 2 || !j.holds) continue;
        JobProfile p;
        if (!profile_of(j, &p)) continue;   // nothing measured yet
        if (grouped(j) && j.decision) previous[id] = *j.decision;
        owners[id] = topo_.find_switch(j.owner);
        if (!group_refused_.held(id, now)) eligible.push_back(profiles.size());
        profiles.push_back(std::move(p));
    }
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

void Coordd::notify_leaves(const CoordJob& j) {
    for (const std::string& l : j.leaves) send_assignment(l, false, {j.id}, {});
}

void Coordd::send_assignment(const std::string& leaf, bool full, const std::vector<JobId>& ids,
                             const std::vector<JobId>& ended) {
    wire::Connection* c = leaf_conn(leaf);
    if (!c) return;
    std::vector<JobInfoBuf> bufs(ids.size());
    std::vector<Harmonics__JobInfo*> ptrs;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const CoordJob& j = jobs_.at(ids[i]);
        fill_info(bufs[i], j, job_state(j));
        ptrs.push_back(&bufs[i].info);
    }
    std::vector<std::int64_t> gone(ended.begin(), ended.end());
    Harmonics__LeafAssignment a = HARMONICS__LEAF_ASSIGNMENT__INIT;
    a.coord_epoch = ++epoch_;
    a.full = full;
    a.n_jobs = ptrs.size();
    a.jobs = ptrs.data();
    a.n_ended = gone.size();
    a.ended = gone.data();
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_LEAF_ASSIGNMENT;
    env.leaf_assignment = &a;
    c->send(env);
}

// ---- queries ---------------------------------------------------------------

void Coordd::handle_query(wire::Connection& c, const Harmonics__CtlQuery& q) {
    Harmonics__CtlReply r = HARMONICS__CTL_REPLY__INIT;
    r.kind = q.kind;
    std::string version = PACKAGE_VERSION;
    r.version = const_cast<char*>(version.c_str());
    r.has_uptime_s = 1;
    r.uptime_s = mono_s() - started_;
    r.has_coord_epoch = 1;
    r.coord_epoch = epoch_;
    std::vector<Harmonics__LeafStatus> ls;
    std::vector<Harmonics__LeafStatus*> lp;
    std::vector<JobInfoBuf> jb;
    std::vector<Harmonics__JobInfo*> jp;
    std::string error;
    double now = mono_s();
    if (q.kind == HARMONICS__QUERY_KIND__QUERY_LEAVES) {
        ls.reserve(leaves_.size());
        for (auto& [name, l] : leaves_) {
            Harmonics__LeafStatus s = HARMONICS__LEAF_STATUS__INIT;
            s.leaf = const_cast<char*>(l.name.c_str());
            s.has_connected = 1;
            s.connected = leaf_conn(name) != nullptr;
            s.listen = const_cast<char*>(l.listen.c_str());
            s.has_epoch = s.has_jobs = s.has_cross_leaf_jobs = s.has_predicted_cost = s.has_decide_wall_s = 1;
            s.epoch = l.epoch;
            int n = 0, x = 0;
            for (auto& [id, j] : jobs_)
                if (!j.ended && j.leaves.count(name)) {
                    n++;
                    x += j.leaves.size() > 1;
                }
            s.jobs = n;
            s.cross_leaf_jobs = x;
            s.predicted_cost = l.predicted_cost;
            s.decide_wall_s = l.decide_wall_s;
            if (l.last_seen > 0) {
                s.has_last_seen_s = 1;
                s.last_seen_s = now - l.last_seen;
            }
            ls.push_back(s);
        }
        for (auto& s : ls) lp.push_back(&s);
    } else if (q.kind != HARMONICS__QUERY_KIND__QUERY_PING) {
        std::vector<const CoordJob*> sel;
        for (auto& [id, j] : jobs_) {
            if (q.kind == HARMONICS__QUERY_KIND__QUERY_JOB && id != q.job_id) continue;
            if (q.kind == HARMONICS__QUERY_KIND__QUERY_SCHEDULE && (j.ended || !j.decision)) continue;
            sel.push_back(&j);
        }
        if (q.kind == HARMONICS__QUERY_KIND__QUERY_JOB && sel.empty()) error = "job " + std::to_string(q.job_id) + " not known";
        if (sel.size() > 10000) sel.resize(10000);   // stay under the frame limit
        jb.resize(sel.size());
        for (std::size_t i = 0; i < sel.size(); ++i) {
            fill_info(jb[i], *sel[i], job_state(*sel[i]));
            jp.push_back(&jb[i].info);
        }
    }
    r.n_leaves = lp.size();
    r.leaves = lp.data();
    r.n_jobs = jp.size();
    r.jobs = jp.data();
    if (!error.empty()) r.error = const_cast<char*>(error.c_str());
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_CTL_REPLY;
    env.ctl_reply = &r;
    c.send(env);
}

// ---- periodic work ---------------------------------------------------------

void Coordd::tick_cb(int, short, void* arg) { static_cast<Coordd*>(arg)->on_tick(); }

void Coordd::on_tick() {
    double now = mono_s();
    // Ended jobs stay visible to harmonicsctl for a while, then go.
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        if (it->second.ended && now - it->second.ended_at > 300) {
            if (slurm_) slurm_->forget(it->first);
            group_refused_.forget(it->first);
            it = jobs_.erase(it);
        } else {
            ++it;
        }
    }
    end_run_free(now);
    plan_groups();
    write_summary();
    update_comments(now);
    if (slurm_ && !slurm_loaded_ && now - load_requested_ > 30) {
        load_requested_ = now;
        slurm_->request_load();
    }
}

void Coordd::write_summary() {
    if (state_file_.empty() || state_file_ == "none") return;
    state::Summary s;
    s.epoch = epoch_;
    s.written = wall_s();
    for (SwitchId id : topo_.leaves()) {
        const Switch& sw = topo_.sw(id);
        state::LeafSummary l;
        l.name = sw.name;
        std::vector<std::string> names;
        for (NodeId n : sw.nodes) names.push_back(topo_.node(n).name);
        l.nodes = compress_hostlist(names);
        l.size = std::uint32_t(names.size());
        auto it = leaves_.find(sw.name);
        l.uplink_load = it != leaves_.end() ? it->second.uplink_load : 0;
        // One more cross-leaf job fits while the uplink is not mostly busy.
        l.accept = l.uplink_load < 0.8;
        s.leaves.push_back(l);
    }
    std::string err;
    if (!state::write_summary(state_file_, s, &err)) HLOG_WARN("state file: %s", err.c_str());
}

// A job's state changed: its AdminComment follows within 50 ms, or as soon
// as AdminCommentInterval allows, not at the next tick (a tick is an epoch:
// the comment would lag harmonicsctl by up to an epoch plus the interval).
void Coordd::comment_soon(double delay_s) {
    if (!comment_ev_) return;
    double due = mono_s() + delay_s;
    if (comment_due_ > 0 && comment_due_ <= due) return;   // already sooner
    comment_due_ = due;
    timeval tv = to_timeval(delay_s);
    event_add(comment_ev_, &tv);
}

void Coordd::comment_cb(int, short, void* arg) {
    auto* self = static_cast<Coordd*>(arg);
    self->comment_due_ = 0;
    self->update_comments(mono_s());
}

void Coordd::update_comments(double now) {
    if (!slurm_) return;
    double next = 0;   // earliest time a held-back comment may go
    for (auto& [id, j] : jobs_) {
        if (j.ended) continue;
        std::string leaves;
        for (const std::string& l : j.leaves) leaves += (leaves.empty() ? "" : ",") + l;
        char buf[512];
        std::string window;   // a phase family's member: which window of its period
        if (j.decision && j.decision->group >= 0)
            window = " window=" + std::to_string(j.decision->group) + "/" + std::to_string(j.decision->groups);
        if (j.decision && j.decision->gated)
            std::snprintf(buf, sizeof buf, "harmonics:leaves=%s period=%.1fms shift=%.1fms%s epoch=%llu state=%s",
                          leaves.c_str(), j.decision->period_s * 1e3, j.decision->shift_s * 1e3, window.c_str(),
                          (unsigned long long)j.decision_epoch, job_state(j).c_str());
        else
            std::snprintf(buf, sizeof buf, "harmonics:leaves=%s state=%s", leaves.c_str(), job_state(j).c_str());
        if (buf == j.comment_sent) continue;
        double due = j.comment_at + cfg_.admin_comment_interval_s;
        if (now < due) {
            if (next == 0 || due < next) next = due;
            continue;
        }
        j.comment_sent = buf;
        j.comment_at = now;
        slurm_->post_admin_comment(id, buf);
    }
    if (next > 0) comment_soon(std::max(next - now, 0.05));
}

void Coordd::slurm_cb(int, short, void* arg) {
    Coordd* self = static_cast<Coordd*>(arg);
    self->on_comment_results();
    self->on_slurm_loaded();
}

// A comment counts as written only once Slurm took it: after a failure it is
// posted again once AdminCommentInterval has passed (a decision that stays
// the same would otherwise never reach Slurm).
void Coordd::on_comment_results() {
    std::vector<CommentResult> results;
    slurm_->take_results(&results);
    for (const CommentResult& r : results) {
        if (r.ok || r.job_gone) continue;
        auto it = jobs_.find(r.id);
        if (it != jobs_.end() && it->second.comment_sent == r.text) {
            it->second.comment_sent.clear();
            comment_soon(std::max(cfg_.admin_comment_interval_s, 0.05));
        }
    }
}

void Coordd::on_slurm_loaded() {
    std::vector<SlurmJob> jobs;
    std::string err;
    if (!slurm_->take_loaded(&jobs, &err)) return;
    if (!err.empty()) {
        HLOG_WARN("slurm_load_jobs: %s; the job table comes from notify events and the schedds (retrying in 30 s)",
                  err.c_str());
        return;
    }
    slurm_loaded_ = true;
    std::set<JobId> running;
    for (const SlurmJob& s : jobs) {
        CoordJob& j = job(s.id);
        j.uid = s.uid;
        j.has_uid = j.uid_from_slurm = true;
        set_nodes(j, s.nodes);
        running.insert(s.id);
    }
    // Never trust a stale table: a job a schedd still remembers but Slurm no
    // longer runs has ended (unless we heard of it after asking Slurm).
    std::map<std::string, std::vector<JobId>> gone;
    for (auto& [id, j] : jobs_)
        if (!j.ended && !running.count(id) && j.seen_at < load_requested_) {
            j.ended = true;
            j.ended_at = mono_s();
            HLOG_INFO("job %lld ended (not running in Slurm)", (long long)id);
            for (const std::string& l : j.leaves) gone[l].push_back(id);
        }
    for (auto& [leaf, ids] : gone) send_assignment(leaf, false, {}, ids);
    HLOG_INFO("slurmctld reports %zu running jobs", jobs.size());
    assign_owners();
    comment_soon();
    for (auto& [name, l] : leaves_) {
        std::vector<JobId> mine;
        for (auto& [id, j] : jobs_)
            if (!j.ended && j.leaves.count(name)) mine.push_back(id);
        send_assignment(name, true, mine, {});
    }
}

}  // namespace harmonics::coord
