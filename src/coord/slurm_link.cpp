#include "slurm_link.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "config.h"
#include "util/clock.h"
#include "util/log.h"

#ifdef HARMONICS_WITH_SLURM
extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}
#endif

namespace harmonics::coord {

#ifdef HARMONICS_WITH_SLURM
namespace {
// A job's end time (start plus time limit), Unix seconds; 0 for a job without
// a limit, which Slurm gives a year: nothing to weigh.
double end_time_of(const slurm_job_info_t& j) {
    const bool limited = j.time_limit != INFINITE && j.time_limit != NO_VAL && j.end_time > 0;
    return limited ? double(j.end_time) : 0.0;
}
}  // namespace
#endif

SlurmLink::SlurmLink(std::string conf, double max_updates_per_s, std::function<void()> wake)
    : conf_(std::move(conf)), max_per_s_(max_updates_per_s > 0 ? max_updates_per_s : 1), wake_(std::move(wake)) {}

SlurmLink::~SlurmLink() {
    {
        std::lock_guard<std::mutex> g(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (th_.joinable()) th_.join();
}

bool SlurmLink::usable(const std::string& conf, std::string* why) {
#ifdef HARMONICS_WITH_SLURM
    std::string path = conf;
    if (path.empty()) {
        const char* env = std::getenv("SLURM_CONF");
        path = env && *env ? env : "/etc/slurm/slurm.conf";
    }
    struct stat st;
    // libslurm exits the process when it cannot read its config: check first.
    if (::stat(path.c_str(), &st) != 0) {
        *why = "no " + path;
        return false;
    }
    return true;
#else
    (void)conf;
    *why = "built without libslurm";
    return false;
#endif
}

void SlurmLink::start() { th_ = std::thread([this] { worker(); }); }

void SlurmLink::request_load() {
    {
        std::lock_guard<std::mutex> g(mu_);
        load_wanted_ = true;
    }
    cv_.notify_all();
}

void SlurmLink::request_end_time(std::int64_t job) {
    {
        std::lock_guard<std::mutex> g(mu_);
        if (end_wanted_.size() >= 100000) return;   // bounded
        end_wanted_.emplace(job, std::make_pair(std::chrono::steady_clock::now(), 0));
    }
    cv_.notify_all();
}

void SlurmLink::take_end_times(std::vector<SlurmEndTime>* out) {
    std::lock_guard<std::mutex> g(mu_);
    out->swap(end_times_);
    end_times_.clear();
}

std::string kept_comment(const std::string& current) {
    static const std::string ours = "harmonics:";
    if (current.compare(0, ours.size(), ours) != 0) return current;
    std::size_t sep = current.find("; ");
    return sep == std::string::npos ? std::string() : current.substr(sep + 2);
}

std::string full_comment(const std::string& text, const std::string& kept) {
    return kept.empty() ? text : text + "; " + kept;
}

void SlurmLink::forget(std::int64_t job) {
    std::lock_guard<std::mutex> g(mu_);
    if (forgotten_.size() < 100000) forgotten_.push_back(job);
}

void SlurmLink::take_results(std::vector<CommentResult>* out) {
    std::lock_guard<std::mutex> g(mu_);
    out->swap(results_);
    results_.clear();
}

void SlurmLink::post_admin_comment(std::int64_t job, const std::string& text) {
    {
        std::lock_guard<std::mutex> g(mu_);
        if (pending_.size() >= 100000 && !pending_.count(job)) return;   // bounded
        pending_[job] = text;
    }
    cv_.notify_all();
}

bool SlurmLink::take_loaded(std::vector<SlurmJob>* jobs, std::string* err) {
    std::lock_guard<std::mutex> g(mu_);
    if (!load_ready_) return false;
    load_ready_ = false;
    *jobs = std::move(loaded_);
    *err = load_err_;
    loaded_.clear();
    return true;
}

// Worker thread. At most one warning a minute, saying how many failures it
// stands for: slurmctld being away must not flood the log.
void SlurmLink::warn_failure(std::int64_t id, const std::string& why) {
    const double now = mono_s();
    ++unwarned_;
    if (now - last_warn_ < 60) {
        HLOG_DEBUG("AdminComment of job %lld not updated: %s", (long long)id, why.c_str());
        return;
    }
    HLOG_WARN("AdminComment of job %lld not updated: %s (%llu failed update(s) since the last warning; retried)",
              (long long)id, why.c_str(), (unsigned long long)unwarned_);
    last_warn_ = now;
    unwarned_ = 0;
}

// Worker thread: one AdminComment update, its outcome queued for the loop.
void SlurmLink::update(std::int64_t id, const std::string& text) {
    CommentResult r;
    r.id = id;
    r.text = text;
#ifdef HARMONICS_WITH_SLURM
    // A failed Slurm call: for a job that is gone there is nothing to update
    // (debug only); anything else is a failure worth a (rate-limited) warning.
    auto failed = [&](const char* call) {
        const int e = slurm_get_errno();
        r.job_gone = e == ESLURM_INVALID_JOB_ID || e == ESLURM_ALREADY_DONE || e == ESLURM_JOB_FINISHED;
        if (r.job_gone)
            HLOG_DEBUG("job %lld: no AdminComment update, Slurm: %s", (long long)id, slurm_strerror(e));
        else
            warn_failure(id, std::string(call) + ": " + slurm_strerror(e));
    };
    auto k = kept_.find(id);
    if (k == kept_.end()) {
        // Read once what the comment said before coordd (e.g. the steering tag).
        job_info_msg_t* msg = nullptr;
        if (slurm_load_job(&msg, std::uint32_t(id), SHOW_DETAIL) == SLURM_SUCCESS) {
            std::string current;
            for (std::uint32_t i = 0; msg && i < msg->record_count; ++i)
                if (std::int64_t(msg->job_array[i].job_id) == id && msg->job_array[i].admin_comment)
                    current = msg->job_array[i].admin_comment;
            slurm_free_job_info_msg(msg);
            k = kept_.emplace(id, kept_comment(current)).first;
        } else {
            failed("slurm_load_job");
        }
    }
    if (k != kept_.end()) {
        std::string full = full_comment(text, k->second);
        job_desc_msg_t d;
        slurm_init_job_desc_msg(&d);
        d.job_id = std::uint32_t(id);
        d.admin_comment = const_cast<char*>(full.c_str());
        r.ok = slurm_update_job(&d) == SLURM_SUCCESS;
        if (!r.ok) failed("slurm_update_job");
    }
#else
    r.job_gone = true;
#endif
    {
        std::lock_guard<std::mutex> g(mu_);
        (r.ok ? updates_ : failed_)++;
        if (results_.size() < 100000) results_.push_back(std::move(r));
    }
    wake_();
}

// Worker thread. True when the answer is final: the job is not running, or
// runs past its configuration, or Slurm does not know it; false to ask again
// (still configuring, or the call failed: `err` says why).
bool SlurmLink::look_up_end_time(SlurmEndTime* r) {
    r->err.clear();
#ifdef HARMONICS_WITH_SLURM
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, std::uint32_t(r->id), SHOW_ALL) != SLURM_SUCCESS) {
        const int e = slurm_get_errno();
        if (e == ESLURM_INVALID_JOB_ID) return true;
        r->err = std::string("slurm_load_job: ") + slurm_strerror(e);
        return false;
    }
    bool configuring = false;
    for (std::uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        if (std::int64_t(j.job_id) != r->id) continue;
        r->running = (j.job_state & JOB_STATE_BASE) == JOB_RUNNING;
        configuring = (j.job_state & JOB_CONFIGURING) != 0;
        r->end_time_s = end_time_of(j);
    }
    slurm_free_job_info_msg(msg);
    return !(r->running && configuring);
#else
    r->err = "built without libslurm";
    return true;
#endif
}

void SlurmLink::worker() {
#ifdef HARMONICS_WITH_SLURM
    slurm_init(conf_.empty() ? nullptr : conf_.c_str());
#endif
    using Clock = std::chrono::steady_clock;
    auto next_update = Clock::now();
    const auto gap = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / max_per_s_));
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
        if (load_wanted_) {
            load_wanted_ = false;
            lk.unlock();
            std::vector<SlurmJob> jobs;
            std::string err;
#ifdef HARMONICS_WITH_SLURM
            job_info_msg_t* msg = nullptr;
            if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
                err = slurm_strerror(slurm_get_errno());
            } else {
                for (uint32_t i = 0; i < msg->record_count; ++i) {
                    const slurm_job_info_t& j = msg->job_array[i];
                    if ((j.job_state & JOB_STATE_BASE) != JOB_RUNNING) continue;
                    jobs.push_back({std::int64_t(j.job_id), j.user_id, j.nodes ? j.nodes : "", end_time_of(j)});
                }
                slurm_free_job_info_msg(msg);
            }
#else
            err = "built without libslurm";
#endif
            lk.lock();
            loaded_ = std::move(jobs);
            load_err_ = err;
            load_ready_ = true;
            lk.unlock();
            wake_();
            lk.lock();
            continue;
        }
        // An end time wanted now: asked once a second while the job
        // configures, for at most a minute (a node booting takes longer:
        // the end Slurm gives then is a lower bound, which only charges
        // the job's first waits more).
        auto due = std::find_if(end_wanted_.begin(), end_wanted_.end(),
                                [now = Clock::now()](const auto& e) { return e.second.first <= now; });
        if (due != end_wanted_.end()) {
            SlurmEndTime r;
            r.id = due->first;
            const int tries = ++due->second.second;
            lk.unlock();
            const bool settled = look_up_end_time(&r) || tries >= 60;
            lk.lock();
            auto it = end_wanted_.find(r.id);
            if (!settled) {
                if (it != end_wanted_.end()) it->second.first = Clock::now() + std::chrono::seconds(1);
                continue;
            }
            if (it != end_wanted_.end()) end_wanted_.erase(it);
            end_times_.push_back(std::move(r));
            lk.unlock();
            wake_();
            lk.lock();
            continue;
        }
        if (!forgotten_.empty()) {
            for (std::int64_t id : forgotten_) kept_.erase(id);
            forgotten_.clear();
        }
        if (!pending_.empty() && Clock::now() >= next_update) {
            auto it = pending_.begin();
            std::int64_t id = it->first;
            std::string text = std::move(it->second);
            pending_.erase(it);
            lk.unlock();
            update(id, text);
            lk.lock();
            next_update = Clock::now() + gap;
            continue;
        }
        // Sleep until the next update or end-time lookup is due, or news.
        auto wake_at = Clock::time_point::max();
        if (!pending_.empty()) wake_at = next_update;
        for (const auto& [id, when] : end_wanted_) wake_at = std::min(wake_at, when.first);
        if (wake_at != Clock::time_point::max())
            cv_.wait_until(lk, wake_at);
        else
            cv_.wait(lk);
    }
#ifdef HARMONICS_WITH_SLURM
    lk.unlock();
    slurm_fini();
#endif
}

}  // namespace harmonics::coord
