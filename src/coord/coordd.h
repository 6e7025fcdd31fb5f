// harmonics-coordd: the Global Coordinator beside slurmctld. It learns job
// starts and ends from the PrEp plugin / harmonics-notify (Unix socket), the
// schedds' views of their jobs (TCP), and at start the running jobs from
// Slurm. Each job spanning several leaves gets one owner leaf; the owner's
// decision is handed to the job's other leaves as fixed. It writes each job's
// state into its AdminComment and publishes the per-leaf summary file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/harmonics_conf.h"
#include "policy/holds.h"
#include "policy/outrun.h"
#include "policy/policy.h"
#include "sched/job_aggregate.h"
#include "slurm_link.h"
#include "wire/event_conn.h"

struct event_base;
struct event;

namespace harmonics::coord {

struct CoordOptions {
    std::string config_path;
    std::string listen;        // --listen; empty: CoordAddress
    std::string socket;        // --socket; empty: CoordSocket
    std::string state_file;    // --state-file; empty: StateFile
    std::string slurm = "auto";  // auto | yes | no
    std::string slurm_conf;    // "" = libslurm's default
    double idle_timeout_s = 300;
    std::size_t max_jobs = 100000;
};

struct LeafView {                       // one leaf's report on a job
    double period_s = 0;
    std::vector<sched::PhaseSample> phases;
    double uplink_load = 0;
    int ranks = 0;
    double slack_used = 0;              // share of the job's slack this leaf's collisions take (gated cross-leaf jobs)
    bool adopt = false;                 // the leaf asks to own the job (free, it takes gated jobs there past their slack)
    bool holds = true;                  // false: a rank of the job there does not hold its collectives
    double iteration_start_s = 0;       // its latest iteration's start there (absolute); 0: not known
};

struct CoordJob {
    JobId id = 0;
    std::uint32_t uid = 0;
    bool uid_from_slurm = false;        // notify / slurm_load_jobs (trusted) vs a schedd's claim
    bool has_uid = false;
    std::string node_list;
    bool nodes_from_slurm = false;     // node_list is Slurm's (notify / slurm_load_jobs)
    std::vector<std::string> nodes;
    std::set<std::string> leaves;
    bool ended = false;
    double ended_at = 0;
    double seen_at = 0;                 // monotonic time coordd first heard of it
    std::string owner;                  // cross-leaf jobs
    std::optional<JobDecision> decision;
    std::uint64_t decision_epoch = 0;
    std::map<std::string, LeafView> views;
    std::string comment_sent;           // posted, and not known to have failed
    double comment_at = -1e9;
    // Run free on every leaf until run_free_until (monotonic): its collisions
    // on one of its leaves took more than its slack even after that leaf
    // became its owner. Each time again doubles the hold.
    bool run_free = false;
    double run_free_until = 0;
    int run_free_times = 0;
    bool reowned = false;               // handed to the leaf where it collided (once)
    bool adopted = false;               // ... a free job, to a leaf that asked for it: a guest there
    // Every rank holds its collectives (LeafJob.holds on all its leaves): a
    // job that does not runs free on every leaf and joins no family.
    bool holds = true;
    // Its deciding leaf (owner, or the one leaf of a leaf-local job) runs it
    // free till then (monotonic): gated, it kept iterating past its period
    // (LeafJob.outran_for_s). Not handed to another leaf meanwhile.
    double outran_until = 0;
    // When Slurm ends the job at the latest (start plus time limit), Unix
    // seconds; 0 unknown or no limit. Passed to its leaves (JobInfo.end_time_s).
    double end_time_s = 0;
    // Slurm said what end_time_s is (a limit, or none): the leaves are told
    // even "no limit", which clears an end they had (a limit lifted, a job
    // requeued without one). Unknown, they keep what they have.
    bool end_known = false;
    // Monotonic: when slurmctld was last asked for the end time because it
    // had passed with the job still running (its limit moved, or its end
    // event was lost).
    double end_asked_at = -1e9;
};

inline bool outran(const CoordJob& j, double now) { return j.outran_until > now; }

// Whether every leaf runs the job free: for its collisions, or because it
// does not hold its collectives to a schedule.
inline bool runs_free(const CoordJob& j) { return j.run_free || !j.holds; }

struct LeafLink {
    std::string name;
    std::uint64_t conn = 0;             // 0: not connected
    wire::Listener* via = nullptr;
    std::string listen;
    std::uint64_t epoch = 0;
    double last_seen = 0;               // 0: not heard of since this coordd started
    double predicted_cost = 0;
    double decide_wall_s = 0;
    double uplink_load = 0;
};

class Coordd {
public:
    explicit Coordd(CoordOptions opts);
    ~Coordd();
    bool start(std::string* err);
    int run();
    void stop();

private:
    bool load_config(HarmonicsConfig* cfg, Topology* topo, std::string* err);
    void reload();
    std::string authorize(Harmonics__Role role, std::uint32_t uid) const;
    void accept(wire::Listener* via, wire::Connection& c);
    void on_frame(wire::Listener* via, wire::Connection& c, wire::EnvelopePtr env);
    void on_closed(wire::Connection& c);

    void handle_job_event(wire::Connection& c, const Harmonics__JobEvent& e);
    void handle_register(wire::Listener* via, wire::Connection& c, const Harmonics__ScheddRegister& r);
    void handle_proposal(wire::Connection& c, const Harmonics__LeafProposal& p);
    void handle_query(wire::Connection& c, const Harmonics__CtlQuery& q);
    void merge_leaf_job(const std::string& leaf, const Harmonics__LeafJob& lj, bool registering);
    void update_holds(CoordJob& j);
    void note_outran(CoordJob& j, const std::string& leaf, const Harmonics__LeafJob& lj, bool registering);

    CoordJob& job(JobId id);
    void set_nodes(CoordJob& j, const std::string& node_list);
    // `natural_s` (optional): its period net of the gate's holds.
    bool profile_of(const CoordJob& j, JobProfile* p, double* natural_s = nullptr) const;
    bool leaves_family_outrun(CoordJob& j, double natural_s, double now);
    void assign_owners();
    void plan_groups();
    bool registrations_settled();
    bool grouped(const CoordJob& j) const;
    void send_assignment(const std::string& leaf, bool full, const std::vector<JobId>& jobs,
                         const std::vector<JobId>& ended);
    void notify_leaves(const CoordJob& j);
    // The job has ended: marked so, and its leaves drop it.
    void end_job(CoordJob& j);
    void check_slack(const std::vector<JobId>& ids);
    void check_adopt(const std::vector<JobId>& ids);
    CoordJob* guest_on(const std::string& leaf, CoordJob& victim);
    bool owner_sees_all(const std::string& leaf, const std::string& owner) const;
    void settle_slack(CoordJob& j);
    bool leaf_settled(const std::string& leaf) const;
    bool settled(const CoordJob& j) const;
    void end_run_free(double now);
    wire::Connection* leaf_conn(const std::string& leaf);
    std::string job_state(const CoordJob& j) const;

    void on_tick();
    void write_summary();
    void update_comments(double now);
    void comment_soon(double delay_s = 0.05);
    static void comment_cb(int, short, void* arg);
    void on_slurm_loaded();
    // End times slurmctld gave for jobs whose start event had none, or that
    // ran past theirs.
    void on_slurm_end_times();
    void ask_overdue_end_times(double now);
    void on_comment_results();

    static void tick_cb(int, short, void* arg);
    static void slurm_cb(int, short, void* arg);
    static void signal_cb(int sig, short, void* arg);

    CoordOptions opts_;
    HarmonicsConfig cfg_;
    Topology topo_;
    std::uint32_t slurm_uid_ = 0;
    bool slurm_uid_known_ = false;
    std::string listen_, socket_, state_file_;
    double started_ = 0;

    event_base* base_ = nullptr;
    event* tick_ev_ = nullptr;
    event* slurm_ev_ = nullptr;
    event* comment_ev_ = nullptr;
    double comment_due_ = 0;            // when comment_ev_ fires; 0: not armed
    std::vector<event*> signal_evs_;
    wire::Counters counters_;
    std::unique_ptr<wire::Listener> tcp_;
    std::unique_ptr<wire::Listener> unix_;
    std::unique_ptr<SlurmLink> slurm_;

    std::map<JobId, CoordJob> jobs_;
    std::map<std::string, LeafLink> leaves_;
    // Per leaf: its slack reports from proposals before this epoch are
    // ignored (measured before a hand-over or a free run reached it).
    std::map<std::string, std::uint64_t> slack_from_epoch_;
    std::uint64_t epoch_ = 0;
    std::uint64_t group_plans_ = 0;     // phase-group plans that changed a decision (their epoch)
    // Jobs of phase families refused for their overloads (monotonic clock).
    RefusalHolds group_refused_;
    OutrunWatch family_outrun_;   // members far past their family's period (policy/outrun.h)
    // A job's period became known: plan phase groups before acting on slack
    // reports (the owners' conflict rule would otherwise hand over jobs a
    // family is about to take), not only at the next tick.
    bool groups_stale_ = false;
    // A job the schedds had seen on one leaf was reported by another: it is
    // cross-leaf now and needs an owner before anything plans it (a phase
    // family took such a job as if another leaf owned it, beside a ring its
    // own owner planned; doc/testbed.md, "Stop 35").
    bool owners_stale_ = false;
    bool registrations_settled_ = false;
    std::uint64_t events_ = 0;
    double load_requested_ = 0;         // when slurm_load_jobs was asked for
    bool slurm_loaded_ = false;         // the table has been reconciled with Slurm once
};

}  // namespace harmonics::coord
