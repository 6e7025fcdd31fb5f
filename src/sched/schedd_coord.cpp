// harmonics-schedd's link to coordd: proposals and registration out, the
// owners' decisions (assignments) in.
#include "schedd.h"

#include "topology/hostlist.h"
#include "util/clock.h"
#include "util/log.h"
#include "wire/schedule_msg.h"

namespace harmonics::sched {

void Schedd::fill_leaf_job(const SchedJob& j, Harmonics__LeafJob* lj, Harmonics__Schedule* sch,
                           std::string* nodes) const {
    lj->job_id = j.id;
    if (j.summary) {
        lj->has_period_s = 1;
        lj->period_s = j.summary->period_s;
        if (j.summary->last_collective_s > 0) {
            lj->has_iteration_start_s = 1;
            lj->iteration_start_s = j.summary->last_collective_s;
        }
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
    if (const double left = j.outran_until_s - mono_s(); left > 0 && owns(j)) {
        lj->has_outran_for_s = 1;
        lj->outran_for_s = left;
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

// The hold the leaf deciding a job gave it for outrunning its period, as
// coordd passes it on (JobInfo.outran_for_s): a schedd restarted mid-hold
// keeps it, the job's other leaves plan it free and do not ask to adopt it,
// and a leaf it is handed to keeps it running free (the simulator's
// coordinator holds a job, not a leaf's view of it). True when it starts or
// ends a hold here. An owner that has held the job itself knows better:
// coordd's echo of its own hold comes a round trip late, and could restart a
// hold that just ended; so could the last epoch of one on any leaf. Another
// leaf's hold ends when coordd says so: the owner may gate the job again.
bool Schedd::keep_outrun_hold(SchedJob& j, double left_s) {
    const double now = mono_s();
    if (!owns(j) && left_s <= 0 && j.outran_until_s > now) {
        j.outran_until_s = 0;
        return true;
    }
    if (left_s <= cfg_.epoch_s || j.outran_until_s > now || (owns(j) && j.outran_times > 0)) return false;
    j.outran_times = std::max(j.outran_times, 1);
    j.outran_until_s = now + left_s;
    HLOG_INFO("job %lld: runs free for %.0f s more: gated, it kept iterating past its period (leaf %s, via coordd)",
              (long long)j.id, left_s, j.owner_leaf.empty() ? leaf_name_.c_str() : j.owner_leaf.c_str());
    return true;
}

// Slurm's end time as coordd passes it on (0: no limit). A moved or lifted
// limit is logged: the wait a new gate costs the job is weighed over the
// time it has left, and a past end would weigh it over one period.
void Schedd::set_end_time(SchedJob& j, double end_s) {
    if (end_s == j.end_time_s) return;
    if (j.end_time_s > 0 && end_s > 0)
        HLOG_INFO("job %lld: time limit moved, it ends in %.0f s (via coordd)", (long long)j.id, end_s - wall_s());
    else if (j.end_time_s > 0)
        HLOG_INFO("job %lld: no time limit now (via coordd)", (long long)j.id);
    j.end_time_s = end_s;
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
        if (ji->has_end_time_s) set_end_time(j, std::max(0.0, ji->end_time_s));
        if (keep_outrun_hold(j, ji->has_outran_for_s ? ji->outran_for_s : 0)) changed = true;
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
