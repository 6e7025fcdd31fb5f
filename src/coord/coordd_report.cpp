// What coordd tells: assignments to the schedds, harmonicsctl's answers,
// and on its tick the summary file and the jobs' comments in Slurm.
#include "coordd.h"

#include <event2/event.h>

#include <algorithm>
#include <cstdio>

#include "config.h"
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
    if (const double left = j.outran_until - mono_s(); left > 0) {
        b.info.has_outran_for_s = 1;
        b.info.outran_for_s = left;
    }
    if (j.end_known) {   // 0: no limit
        b.info.has_end_time_s = 1;
        b.info.end_time_s = j.end_time_s;
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

void Coordd::notify_leaves(const CoordJob& j) {
    for (const std::string& l : j.leaves) send_assignment(l, false, {j.id}, {});
}

void Coordd::end_job(CoordJob& j) {
    j.ended = true;
    j.ended_at = mono_s();
    for (const std::string& l : j.leaves) send_assignment(l, false, {}, {j.id});
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
    ask_overdue_end_times(now);
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
            std::snprintf(buf, sizeof buf, "harmonics:leaves=%s state=%s%s", leaves.c_str(), job_state(j).c_str(),
                          outran(j, now) ? " outran=yes" : "");
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
    self->on_slurm_end_times();
}

// A job running past its end time (by more than slurmctld takes to end it)
// had its limit moved (`scontrol update TimeLimit=`), or its end event was
// lost: slurmctld is asked again, once a minute per job. Its leaves would
// otherwise weigh every new gate's wait over a period, as if it were ending.
void Coordd::ask_overdue_end_times(double now) {
    if (!slurm_) return;
    const double wall = wall_s();
    for (auto& [id, j] : jobs_) {
        if (j.ended || j.end_time_s <= 0 || wall < j.end_time_s + 5 || now - j.end_asked_at < 60) continue;
        j.end_asked_at = now;
        slurm_->request_end_time(id);
    }
}

// A start event from harmonics-notify carries no end time; slurmctld's goes
// to the job's leaves, whose plans charge a new gate's first wait over it.
void Coordd::on_slurm_end_times() {
    std::vector<SlurmEndTime> answers;
    slurm_->take_end_times(&answers);
    for (const SlurmEndTime& a : answers) {
        auto it = jobs_.find(a.id);
        if (it == jobs_.end() || it->second.ended) continue;
        CoordJob& j = it->second;
        if (!a.err.empty()) {
            HLOG_WARN("job %lld: its end time could not be read from slurmctld (%s)", (long long)j.id, a.err.c_str());
        } else if (!a.running && j.end_time_s > 0 && wall_s() > j.end_time_s + 60) {
            // Over a minute past its end and gone from Slurm: its end event
            // was lost (one on its way comes within a second).
            HLOG_INFO("job %lld ended (not running in Slurm, past its end time)", (long long)j.id);
            end_job(j);
        } else if (!a.running) {
            // Just ended, or asked at its start: its end event is on its way.
            HLOG_INFO("job %lld: slurmctld does not run it (asked for its time limit)", (long long)j.id);
        } else {
            // Its end, or no limit (0; an overdue job's limit lifted: not
            // asked again, and its leaves drop the end they had).
            const double end = std::max(0.0, a.end_time_s);
            const bool moved = end != j.end_time_s || !j.end_known;
            if (end <= 0)
                HLOG_INFO("job %lld: no time limit (from slurmctld)", (long long)j.id);
            else if (moved)
                HLOG_INFO("job %lld: time limit ends in %.0f s (from slurmctld)", (long long)j.id, end - wall_s());
            j.end_time_s = end;
            j.end_known = true;
            if (moved) notify_leaves(j);
        }
    }
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
        j.end_time_s = s.end_time_s;   // 0: no limit
        j.end_known = true;
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
