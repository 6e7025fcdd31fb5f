#include "slurm_link.h"

#include <sys/stat.h>

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
                    const bool limited = j.time_limit != INFINITE && j.time_limit != NO_VAL && j.end_time > 0;
                    jobs.push_back({std::int64_t(j.job_id), j.user_id, j.nodes ? j.nodes : "",
                                    limited ? double(j.end_time) : 0.0});
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
        if (!pending_.empty())
            cv_.wait_until(lk, next_update);
        else
            cv_.wait(lk);
    }
#ifdef HARMONICS_WITH_SLURM
    lk.unlock();
    slurm_fini();
#endif
}

}  // namespace harmonics::coord
