// harmonics-coordd's line to slurmctld through libslurm: the running jobs at
// start (slurm_load_jobs) and AdminComment updates (slurm_update_job). Every
// libslurm call may block for seconds, so they all run on one worker thread;
// results come back to the event loop through a callback the loop drains.
// Updates are rate-limited so coordd never loads slurmctld. Each update's
// outcome goes back to the loop, which re-posts failed ones (a comment that
// never reached Slurm must not count as written).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace harmonics::coord {

struct SlurmJob {
    std::int64_t id = 0;
    std::uint32_t uid = 0;
    std::string nodes;     // hostlist
    double end_time_s = 0; // start plus time limit, Unix seconds; 0: no limit
};

// A running job's end time, asked of slurmctld for a start event that did
// not carry it (harmonics-notify's).
struct SlurmEndTime {
    std::int64_t id = 0;
    bool running = false;  // Slurm runs the job (else it ended or is unknown)
    double end_time_s = 0; // start plus time limit, Unix seconds; 0: no limit
    std::string err;       // the call failed: nothing is known
};

struct CommentResult {
    std::int64_t id = 0;
    std::string text;      // as posted (without the kept part)
    bool ok = false;
    bool job_gone = false; // Slurm no longer knows the job or it is done: no retry
};

// What coordd keeps of a job's AdminComment from before coordd first wrote
// it (the job_submit plugin's `harmonics-steer: ...` tag, an admin's note):
// all of it, or, when it is coordd's own (`harmonics:...; KEPT`, e.g. after
// a coordd restart), the KEPT part.
std::string kept_comment(const std::string& current);
// The AdminComment coordd writes: its text, then the kept part.
std::string full_comment(const std::string& text, const std::string& kept);

class SlurmLink {
public:
    // `conf`: slurm.conf path ("" = libslurm's default). `max_updates_per_s`
    // bounds slurm_update_job calls. `wake` is called (from the worker) when
    // a result is ready; it must be thread-safe (e.g. event_active).
    SlurmLink(std::string conf, double max_updates_per_s, std::function<void()> wake);
    ~SlurmLink();
    // True when libslurm is built in and a slurm.conf is there to read.
    static bool usable(const std::string& conf, std::string* why);
    void start();
    // Asks for the running jobs; the answer arrives in take_loaded().
    void request_load();
    // Asks for a running job's end time once its configuration is over
    // (PrologSlurmctld done: Slurm then moves the end on by the time the
    // prolog took); the answer arrives in take_end_times().
    void request_end_time(std::int64_t job);
    // On the loop: the end times answered since the last call.
    void take_end_times(std::vector<SlurmEndTime>* out);
    // Replaces any queued comment for the job. The job's comment from before
    // coordd (see kept_comment) is read once and stays at the end.
    void post_admin_comment(std::int64_t job, const std::string& text);
    // The job is gone from coordd's table: drop what was kept for it.
    void forget(std::int64_t job);
    // On the loop: the outcomes of the updates done since the last call.
    void take_results(std::vector<CommentResult>* out);
    // On the loop: the last load's result. False when none is ready.
    bool take_loaded(std::vector<SlurmJob>* jobs, std::string* err);
    std::uint64_t updates_done() const { return updates_; }
    std::uint64_t updates_failed() const { return failed_; }

private:
    void worker();
    void update(std::int64_t id, const std::string& text);
    // One end-time lookup; false while the job is still configuring.
    bool look_up_end_time(SlurmEndTime* r);
    void warn_failure(std::int64_t id, const std::string& why);
    std::string conf_;
    double max_per_s_;
    std::function<void()> wake_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool load_wanted_ = false;
    bool load_ready_ = false;
    std::vector<SlurmJob> loaded_;
    std::string load_err_;
    std::map<std::int64_t, std::string> pending_;
    // End times wanted: job -> (when to ask next, lookups so far).
    std::map<std::int64_t, std::pair<std::chrono::steady_clock::time_point, int>> end_wanted_;
    std::vector<SlurmEndTime> end_times_;
    std::vector<CommentResult> results_;
    std::vector<std::int64_t> forgotten_;
    // Worker thread only: kept parts by job; failure warnings' rate limit.
    std::map<std::int64_t, std::string> kept_;
    double last_warn_ = -1e9;
    std::uint64_t unwarned_ = 0;
    std::uint64_t updates_ = 0;
    std::uint64_t failed_ = 0;
    std::thread th_;
};

}  // namespace harmonics::coord
