// Bounded queue and sender thread (event_sender.h).
#include "event_sender.h"

#include <algorithm>
#include <chrono>

namespace harmonics::notify {

namespace {
constexpr double kRetryMin_s = 0.5;   // first retry after a failure
constexpr double kRetryMax_s = 10.0;  // backoff cap while coordd is away
}  // namespace

EventSender::EventSender(Target target, std::size_t capacity, LogFn log)
    : target_(std::move(target)), capacity_(std::max<std::size_t>(capacity, 1)), log_(std::move(log)) {
    thread_ = std::thread([this] { run(); });
}

EventSender::~EventSender() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void EventSender::push(JobEvent e) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (queue_.size() >= capacity_) {
            queue_.pop_front();   // the oldest is the least useful to coordd
            ++dropped_;
        }
        queue_.push_back(std::move(e));
        fresh_ = true;
    }
    cv_.notify_one();
}

std::size_t EventSender::queued() const {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size();
}
std::size_t EventSender::dropped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return dropped_;
}
std::size_t EventSender::delivered() const {
    std::lock_guard<std::mutex> lock(mu_);
    return delivered_;
}

// Sends the oldest event without holding the lock during I/O; removes it
// only once coordd acknowledged it.
bool EventSender::deliver_front(wire::Client& c, std::string* err) {
    JobEvent e;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (queue_.empty()) return true;
        e = queue_.front();
    }
    if (!send_event(c, e, target_.timeout_ms, err)) return false;
    std::lock_guard<std::mutex> lock(mu_);
    // push() may have dropped it meanwhile; only pop if it is still first.
    if (!queue_.empty() && queue_.front().job_id == e.job_id && queue_.front().started == e.started) queue_.pop_front();
    ++delivered_;
    if (!err->empty()) log_(true, "job " + std::to_string(e.job_id) + ": " + *err);
    return true;
}

void EventSender::run() {
    wire::Client client;
    double retry_s = kRetryMin_s;
    bool outage_logged = false;
    auto next_try = std::chrono::steady_clock::now();
    auto earliest_try = next_try;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (stop_) return;
            // After a failure, wait out the backoff; a new event cuts it short
            // (coordd may be back, and a job start is worth a cheap try), but
            // never to less than kRetryMin_s after the last try.
            if (std::chrono::steady_clock::now() < next_try) {
                cv_.wait_until(lock, next_try, [this] { return stop_ || fresh_; });
                if (!stop_ && fresh_) cv_.wait_until(lock, earliest_try, [this] { return stop_; });
                if (stop_) return;
            }
            fresh_ = false;
        }
        std::string err;
        bool ok = client.is_open() || open_connection(target_, "slurmctld prep/harmonics", &client, &err);
        if (ok) {
            err.clear();
            ok = deliver_front(client, &err);
        }
        if (ok) {
            if (outage_logged) {
                log_(false, "coordd reachable again at " + target_.socket + "; sending queued events");
                outage_logged = false;
            }
            retry_s = kRetryMin_s;
            next_try = std::chrono::steady_clock::now();   // a try cut short may have succeeded
            continue;
        }
        client.close();
        if (!outage_logged) {
            log_(true, "coordd unreachable at " + target_.socket + " (" + err +
                           "); events are queued (at most " + std::to_string(capacity_) + ")");
            outage_logged = true;
        }
        const auto failed_at = std::chrono::steady_clock::now();
        earliest_try = failed_at + std::chrono::milliseconds(static_cast<long>(kRetryMin_s * 1000));
        next_try = failed_at + std::chrono::milliseconds(static_cast<long>(retry_s * 1000));
        retry_s = std::min(retry_s * 2, kRetryMax_s);
    }
}

}  // namespace harmonics::notify
