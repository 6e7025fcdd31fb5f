// harmonics-schedd: the Local Scheduler of one leaf switch on a libevent
// loop. Hooks on the leaf's compute nodes register and report; every epoch
// (and at once when a job arrives or leaves) the schedd runs the Local
// Scheduler and pushes each job's schedule to its hooks. Cross-leaf jobs are
// exchanged with harmonics-coordd; when coordd is away the schedd keeps
// deciding for its own jobs and keeps the last decision for the others.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/harmonics_conf.h"
#include "job_aggregate.h"
#include "policy/harmonics_local.h"
#include "policy/outrun.h"
#include "util/clock.h"
#include "wire/event_conn.h"

struct event_base;
struct event;

namespace harmonics::sched {

struct ScheddOptions {
    std::string config_path;
    std::string leaf;         // --leaf; empty: from the host name
    std::string listen;       // --listen; empty: the leaf's Schedd= address
    std::string coord;        // --coord; empty: CoordAddress; "none": run alone
    double idle_timeout_s = 120;
    std::size_t max_jobs = 10000;
    std::size_t max_ranks_per_job = 4096;
    std::size_t max_comms_per_conn = 64;
};

// Where a job's owner uid came from.
enum class UidSource { None, Claimed, Coordd };

struct SchedJob {
    JobId id = 0;
    std::uint32_t uid = 0;
    UidSource uid_source = UidSource::None;
    std::set<std::string> local_nodes;       // from hook registrations
    std::vector<std::string> all_nodes;      // from coordd (the whole job)
    bool nodes_complete = false;             // all_nodes is Slurm's list
    std::vector<std::string> leaves;         // from coordd
    int n_nodes = 0;                         // from the hooks
    std::string owner_leaf;                  // from coordd, for cross-leaf jobs
    std::optional<JobDecision> fixed;        // coordd's decision when another leaf owns the job
    std::uint64_t fixed_epoch = 0;
    bool known_to_coordd = false;
    JobAggregate agg;
    std::optional<JobSummary> summary;
    std::optional<JobDecision> decision;     // in force for the job's hooks
    std::uint64_t decision_epoch = 0;
    std::set<std::uint64_t> hooks;           // connection ids
    double last_report_s = 0;                // monotonic
    bool clock_seen = false;                 // a hook's clock offset was logged
    double uplink_load = 0;
    double slack_used = 0;                   // gated cross-leaf jobs: share of their slack our collisions take
    bool run_free = false;                   // coordd: a cross-leaf job every leaf runs free for now
    bool adopt = false;                      // free, owned elsewhere, takes our gated jobs past their slack: ask for it
    bool adopted = false;                    // coordd: handed over because it took a leaf's gated jobs past their slack
    bool handed_over = false;                // coordd: handed over once (conflict or adoption), not again
    // Ranks whose last report said they do not hold their collectives
    // (ProfileReport.holds), and when (monotonic); a rank that says it holds
    // again, or stops reporting, leaves.
    std::map<int, double> not_holding;
    bool holds = true;                       // no fresh report says otherwise: plan it gated where it pays
    bool holds_elsewhere = true;             // coordd: its ranks on the other leaves hold too
    double outran_until_s = 0;               // monotonic: run free till then, having outrun its period
    int outran_times = 0;                    // ... how often (each hold doubles)
    double end_time_s = 0;                   // coordd: Slurm's end time (Unix s), 0 unknown or no limit: what a gate's first wait is weighed over
};

class Schedd {
public:
    explicit Schedd(ScheddOptions opts);
    ~Schedd();
    // Loads config and topology, binds, connects to coordd. False on error
    // (already logged / printed with file, line and key).
    bool start(std::string* err);
    int run();   // until SIGTERM/SIGINT
    void stop();

    // For the benchmark driver: decide now, return the decision's wall time.
    double decide_now();
    const wire::Counters& counters() const { return counters_; }
    // Safe to read from another thread (the benchmark's load generator).
    std::uint64_t reports() const { return reports_.load(std::memory_order_relaxed); }
    // Wall time of each decision (build, Local Scheduler, push), the last 100k.
    const std::vector<double>& decide_times() const { return decide_times_; }
    // The same decisions' CPU time on the schedd's thread (free of preemption).
    const std::vector<double>& decide_cpu_times() const { return decide_cpu_; }
    // Of which the Local Scheduler itself (LeafResult::wall_s).
    const std::vector<double>& policy_times() const { return policy_times_; }
    event_base* base() { return base_; }
    int bound_port() const;

private:
    bool load_config(HarmonicsConfig* cfg, Topology* topo, SwitchId* leaf, std::string* listen, std::string* err);
    void apply_config(HarmonicsConfig cfg, Topology topo);
    void reload();

    // Hooks.
    std::string authorize_hook(Harmonics__Role role, std::uint32_t uid);
    void on_hook_frame(wire::Connection& c, wire::EnvelopePtr env);
    void on_hook_closed(wire::Connection& c);
    bool may_report(const SchedJob& j, std::uint32_t uid) const;
    void refuse(wire::Connection& c, const std::string& why);
    void handle_register(wire::Connection& c, const Harmonics__HookRegister& r);
    void handle_report(wire::Connection& c, const Harmonics__ProfileReport& r);

    // Coordd.
    void on_coord_up(wire::Connection& c);
    void on_coord_frame(wire::Connection& c, wire::EnvelopePtr env);
    void apply_assignment(const Harmonics__LeafAssignment& a);
    void send_proposal();
    void fill_leaf_job(const SchedJob& j, Harmonics__LeafJob* lj, Harmonics__Schedule* sch, std::string* nodes) const;
    void fill_phases(const SchedJob& j, Harmonics__LeafJob* lj, std::vector<Harmonics__PhaseReport>* reports,
                     std::vector<Harmonics__PhaseReport*>* ptrs) const;
    // Every job of the leaf as LeafJob messages (proposal and registration),
    // with the storage they point into, alive until the frame is sent.
    struct LeafJobsOut {
        std::vector<Harmonics__LeafJob> ljs;
        std::vector<Harmonics__Schedule> schs;
        std::vector<std::string> nodes;
        std::vector<std::vector<Harmonics__PhaseReport>> phs;
        std::vector<std::vector<Harmonics__PhaseReport*>> php;
        std::vector<Harmonics__LeafJob*> ptrs;
    };
    void fill_leaf_jobs(LeafJobsOut* out) const;

    // Scheduling.
    void on_epoch();
    void decide_soon();
    void react_soon();
    // What made the schedd decide, for its log.
    enum class Trigger { Epoch, ArrivalOrDeparture, OtherLeaf };
    bool decide(Trigger why);
    void push_schedule(SchedJob& j, double now_wall);
    void measure_slack_used(const std::vector<JobProfile>& profiles);
    void choose_adoption(const std::vector<JobProfile>& profiles);
    void expire_jobs(double now);
    bool is_cross_leaf(const SchedJob& j) const;
    bool owns(const SchedJob& j) const;
    // Its ranks here or elsewhere do not hold their collectives: its owner
    // runs it free or plans where it locks (LocalTuning::lock_measuring), and
    // its hooks only ever get free schedules.
    bool measuring(const SchedJob& j) const { return !j.holds || !j.holds_elsewhere; }
    // Free by coordd's word (a conflict hold; coordd also says so of a
    // measuring job, which its owner still plans).
    bool plans_free(const SchedJob& j) const {
        return (j.run_free || mono_s() < j.outran_until_s) && !measuring(j);
    }
    void watch_outrunning(double now);
    bool keep_outrun_hold(SchedJob& j, double left_s);
    void set_end_time(SchedJob& j, double end_s);
    void update_holds(SchedJob& j, double now);
    // A rank's report counts this long (the aggregate's freshness window).
    double fresh_s() const { return std::max(3 * cfg_.report_interval_s, 2 * cfg_.epoch_s); }

    static void epoch_cb(int, short, void* arg);
    static void soon_cb(int, short, void* arg);
    static void react_cb(int, short, void* arg);
    static void signal_cb(int sig, short, void* arg);

    ScheddOptions opts_;
    HarmonicsConfig cfg_;
    Topology topo_;
    SwitchId leaf_ = -1;
    std::string leaf_name_;
    std::string listen_;
    std::uint32_t slurm_uid_ = 0;
    bool slurm_uid_known_ = false;
    std::unique_ptr<LocalScheduler> local_;
    OutrunWatch outrun_;   // gated jobs of ours iterating past their period (watch_outrunning)

    event_base* base_ = nullptr;
    event* epoch_ev_ = nullptr;
    event* soon_ev_ = nullptr;
    event* react_ev_ = nullptr;
    std::vector<event*> signal_evs_;
    wire::Counters counters_;
    std::unique_ptr<wire::Listener> hooks_;
    std::unique_ptr<wire::Dialer> coord_;

    std::map<JobId, SchedJob> jobs_;
    std::uint64_t epoch_ = 0;
    std::atomic<std::uint64_t> reports_{0};
    std::vector<double> decide_times_;
    std::vector<double> decide_cpu_;
    std::vector<double> policy_times_;
    std::uint64_t decisions_ = 0;
    double last_predicted_cost_ = 0;
    double last_decide_wall_s_ = 0;
    bool soon_pending_ = false;
    bool react_pending_ = false;
    std::mt19937_64 rng_;   // react_soon's delays
};

}  // namespace harmonics::sched
