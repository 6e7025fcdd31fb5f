// harmonics-coordd's line to slurmctld through libslurm: the running jobs at
// start (slurm_load_jobs) and AdminComment updates (slurm_update_job). Every
// libslurm call may block for seconds, so they all run on one worker thread;
// results come back to the event loop through a callback the loop drains.
// Updates are rate-limited so coordd never loads slurmctld.
#pragma once

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
};

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
    // Replaces any queued comment for the job.
    void post_admin_comment(std::int64_t job, const std::string& text);
    // On the loop: the last load's result. False when none is ready.
    bool take_loaded(std::vector<SlurmJob>* jobs, std::string* err);
    std::uint64_t updates_done() const { return updates_; }
    std::uint64_t updates_failed() const { return failed_; }

private:
    void worker();
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
    std::uint64_t updates_ = 0;
    std::uint64_t failed_ = 0;
    std::thread th_;
};

}  // namespace harmonics::coord
