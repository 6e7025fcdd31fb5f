// Background delivery of job events to coordd for prep/harmonics. slurmctld
// calls the PrEp callbacks under its job write lock, so push() only copies
// the event into a bounded queue and returns; a thread of our own connects,
// sends and waits for acks. While coordd is away events stay queued (oldest
// dropped and counted when full) and go out when it returns (at the next
// retry, or at once when a new event comes, at most every 0.5 s); coordd
// reconciles whatever was dropped through libslurm.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "job_event.h"

namespace harmonics::notify {

class EventSender {
public:
    using LogFn = std::function<void(bool error, const std::string& line)>;

    // `capacity` bounds the queue; `log` receives one line per outage and
    // per recovery (never per event). Starts the thread.
    EventSender(Target target, std::size_t capacity, LogFn log);
    ~EventSender();   // stops the thread (bounded by one timeout)
    EventSender(const EventSender&) = delete;
    EventSender& operator=(const EventSender&) = delete;

    // Never blocks on I/O: queue and wake the thread.
    void push(JobEvent e);

    std::size_t queued() const;
    std::size_t dropped() const;
    std::size_t delivered() const;

private:
    void run();
    bool deliver_front(wire::Client& c, std::string* err);

    const Target target_;
    const std::size_t capacity_;
    LogFn log_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<JobEvent> queue_;
    std::size_t dropped_ = 0, delivered_ = 0;
    bool stop_ = false;
    bool fresh_ = false;   // an event was pushed since the last try
    std::thread thread_;
};

}  // namespace harmonics::notify
