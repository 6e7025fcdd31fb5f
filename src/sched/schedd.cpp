// harmonics-schedd: start, reload and stop, and the NCCL hooks of the leaf's
// ranks (registration, profile reports, schedules pushed back).
#include "schedd.h"

#include <event2/event.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>

#include "config/policy_options.h"
#include "util/clock.h"
#include "util/log.h"
#include "wire/schedule_msg.h"

namespace harmonics::sched {

namespace {

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
    // On this schedd's clock: a hook's is off it by clock_offset_s.
    if (r.has_iteration_start_s && r.iteration_start_s > 0)
        s.iteration_start_s = r.iteration_start_s - (r.has_clock_offset_s ? r.clock_offset_s : 0);
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

}  // namespace harmonics::sched
