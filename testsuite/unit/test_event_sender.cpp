// prep/harmonics' event delivery: push() never waits on coordd, events are
// kept (bounded, oldest dropped) while coordd is away and delivered in order
// once it listens. The peer here is a small Unix-socket server speaking the
// real framing and protocol (Hello -> HelloAck, JobEvent -> JobEventAck).
#include "plugins/prep/harmonics/event_sender.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "wire/frame.h"

using namespace harmonics;
using namespace std::chrono;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/harmonics-notify-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// A stand-in for coordd's notify socket: acks every event (or none, when
// `stall` is set) and records (job id, started) in arrival order.
class FakeCoordd {
public:
    FakeCoordd(const std::string& path, bool stall = false) : stall_(stall) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        ::unlink(path.c_str());
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0) std::abort();
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeCoordd() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    std::vector<std::pair<int64_t, bool>> events() {
        std::lock_guard<std::mutex> l(mu_);
        return events_;
    }

private:
    void reply(int c, Harmonics__Envelope& env) {
        std::vector<uint8_t> out;
        wire::encode_frame(env, out);
        if (::write(c, out.data(), out.size()) != static_cast<ssize_t>(out.size())) std::abort();
    }
    void serve() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            int c = ::accept(fd_, nullptr, nullptr);
            wire::FrameDecoder dec;
            while (!stop_ && c >= 0) {
                pollfd q{c, POLLIN, 0};
                if (::poll(&q, 1, 50) <= 0) continue;
                uint8_t buf[4096];
                ssize_t n = ::read(c, buf, sizeof buf);
                if (n <= 0) break;
                dec.feed(buf, static_cast<size_t>(n));
                wire::EnvelopePtr env;
                while (dec.next(&env) == wire::FrameStatus::Ok) {
                    if (env->body_case == HARMONICS__ENVELOPE__BODY_HELLO) {
                        Harmonics__HelloAck ack = HARMONICS__HELLO_ACK__INIT;
                        ack.ok = 1;
                        Harmonics__Envelope r = HARMONICS__ENVELOPE__INIT;
                        r.body_case = HARMONICS__ENVELOPE__BODY_HELLO_ACK;
                        r.hello_ack = &ack;
                        reply(c, r);
                    } else if (env->body_case == HARMONICS__ENVELOPE__BODY_JOB_EVENT) {
                        {
                            std::lock_guard<std::mutex> l(mu_);
                            events_.emplace_back(env->job_event->job_id,
                                                 env->job_event->state == HARMONICS__JOB_STATE__JOB_STARTED);
                        }
                        if (stall_) continue;
                        Harmonics__JobEventAck ack = HARMONICS__JOB_EVENT_ACK__INIT;
                        ack.job_id = env->job_event->job_id;
                        ack.ok = 1;
                        Harmonics__Envelope r = HARMONICS__ENVELOPE__INIT;
                        r.body_case = HARMONICS__ENVELOPE__BODY_JOB_EVENT_ACK;
                        r.job_event_ack = &ack;
                        reply(c, r);
                    }
                }
            }
            if (c >= 0) ::close(c);
        }
    }
    int fd_ = -1;
    bool stall_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mu_;
    std::vector<std::pair<int64_t, bool>> events_;
};

notify::JobEvent ev(int64_t id, bool started) {
    notify::JobEvent e;
    e.job_id = id;
    e.uid = 1000;
    e.started = started;
    e.node_list = "n[1-3]";
    return e;
}

notify::Target target(const TempDir& d, int timeout_ms = 500) {
    notify::Target t;
    t.socket = d.path + "/coordd.sock";
    t.munge_socket = d.path + "/no-munge.socket";   // Unix socket: uid comes from the kernel
    t.timeout_ms = timeout_ms;
    return t;
}

// Bounded wait for a condition (the sender works in the background).
template <class F>
bool eventually(F f, double seconds = 15) {
    auto end = steady_clock::now() + duration<double>(seconds);
    while (steady_clock::now() < end) {
        if (f()) return true;
        std::this_thread::sleep_for(milliseconds(20));
    }
    return f();
}

}  // namespace

TEST(EventSender, DeliversInOrderWhenCoorddListens) {
    TempDir d;
    FakeCoordd coordd(target(d).socket);
    std::vector<std::string> log;
    notify::EventSender s(target(d), 16, [&](bool, const std::string& l) { log.push_back(l); });
    s.push(ev(1, true));
    s.push(ev(2, true));
    s.push(ev(1, false));
    ASSERT_TRUE(eventually([&] { return s.delivered() == 3; }));
    auto got = coordd.events();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], std::make_pair(int64_t(1), true));
    EXPECT_EQ(got[1], std::make_pair(int64_t(2), true));
    EXPECT_EQ(got[2], std::make_pair(int64_t(1), false));
    EXPECT_EQ(s.queued(), 0u);
    EXPECT_TRUE(log.empty());
}

TEST(EventSender, BuffersWhileCoorddIsAwayAndDropsTheOldestWhenFull) {
    TempDir d;
    std::vector<std::string> log;
    std::mutex log_mu;
    notify::EventSender s(target(d), 3, [&](bool, const std::string& l) {
        std::lock_guard<std::mutex> g(log_mu);
        log.push_back(l);
    });
    for (int64_t id = 1; id <= 5; ++id) s.push(ev(id, true));
    EXPECT_EQ(s.queued(), 3u);
    EXPECT_EQ(s.dropped(), 2u);
    ASSERT_TRUE(eventually([&] {
        std::lock_guard<std::mutex> g(log_mu);
        return !log.empty();
    }));
    {
        std::lock_guard<std::mutex> g(log_mu);
        EXPECT_NE(log[0].find("coordd unreachable at " + target(d).socket), std::string::npos) << log[0];
    }
    FakeCoordd coordd(target(d).socket);   // coordd comes back
    ASSERT_TRUE(eventually([&] { return s.delivered() == 3; }));
    auto got = coordd.events();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].first, 3);
    EXPECT_EQ(got[2].first, 5);
    std::lock_guard<std::mutex> g(log_mu);
    ASSERT_EQ(log.size(), 2u);   // one line per outage, one per recovery
    EXPECT_NE(log[1].find("reachable again"), std::string::npos) << log[1];
}

TEST(EventSender, PushNeverWaitsForAStalledCoordd) {
    TempDir d;
    FakeCoordd coordd(target(d).socket, /*stall=*/true);
    notify::EventSender s(target(d, 2000), 64, [](bool, const std::string&) {});
    s.push(ev(1, true));
    ASSERT_TRUE(eventually([&] { return coordd.events().size() == 1; }));
    // The sender now waits up to 2 s for an ack that never comes; pushes
    // made meanwhile must return at once (they run under slurmctld's lock).
    auto t0 = steady_clock::now();
    for (int64_t id = 2; id <= 100; ++id) s.push(ev(id, true));
    EXPECT_LT(duration<double>(steady_clock::now() - t0).count(), 0.5);
    EXPECT_EQ(s.delivered(), 0u);
    EXPECT_EQ(s.queued(), 64u);
}

// After a long outage the backoff has grown to seconds; a job that starts
// once coordd is back must not wait it out: a new event cuts the backoff
// short (at most one try per 0.5 s). Tries fail at 0, 0.5, 1.5 and 3.5 s,
// so at 5 s the next scheduled one is at 7.5 s.
TEST(EventSender, ANewEventCutsTheBackoffShortWhenCoorddIsBack) {
    TempDir d;
    notify::EventSender s(target(d), 16, [](bool, const std::string&) {});
    s.push(ev(1, true));
    std::this_thread::sleep_for(seconds(5));
    EXPECT_EQ(s.delivered(), 0u);
    FakeCoordd coordd(target(d).socket);   // coordd comes back
    auto t0 = steady_clock::now();
    s.push(ev(2, true));
    ASSERT_TRUE(eventually([&] { return s.delivered() == 2; }));
    EXPECT_LT(duration<double>(steady_clock::now() - t0).count(), 1.5);
    auto got = coordd.events();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].first, 1);   // the queued one first, in order
    EXPECT_EQ(got[1].first, 2);
}
