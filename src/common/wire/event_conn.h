// Server and client connections of the daemons on a libevent loop. One
// Connection per peer: it reassembles frames, enforces the handshake (first
// frame must be Hello; MUNGE on TCP, kernel peer credentials on a Unix
// socket), bounds what it buffers in both directions and closes idle peers.
// Any bad frame closes that connection only and is counted.
// Lives in libharmonics-daemon.la (libevent), not in the common library.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wire/frame.h"

struct event_base;
struct bufferevent;
struct evconnlistener;
struct event;
struct sockaddr;

namespace harmonics::wire {

struct Counters {
    std::uint64_t accepted = 0;
    std::uint64_t refused = 0;        // handshake refused (credential, role, uid)
    std::uint64_t bad_frames = 0;     // garbage, truncated, oversized, wrong version
    std::uint64_t idle_closed = 0;
    std::uint64_t overflow_closed = 0;  // peer did not read its output
    std::uint64_t frames_in = 0;
    std::uint64_t frames_out = 0;
};

// Time a connecting peer has to send its Hello.
constexpr double kHelloTimeout_s = 10;

struct ConnLimits {
    std::uint32_t max_frame = kDefaultMaxFrame;
    double idle_timeout_s = 120;      // no frame for this long: close
    std::size_t max_output = 8u << 20;  // bytes queued to a slow peer before closing it
};

// What every daemon starts with: its event loop, and the limits of the
// connections it accepts (harmonics.conf MaxFrame, the daemon's idle timeout).
// False (with *err) when libevent cannot make a loop.
bool open_daemon_loop(std::size_t max_frame_bytes, double idle_timeout_s, event_base** base, ConnLimits* lim,
                      std::string* err);

class Connection;

// Decides whether a peer that presented `role` as `uid` may stay. Returns ""
// to accept or the refusal reason.
using AuthorizeFn = std::function<std::string(Harmonics__Role role, std::uint32_t uid)>;
using FrameFn = std::function<void(Connection&, EnvelopePtr)>;
using ClosedFn = std::function<void(Connection&, const std::string& why)>;

class Connection {
public:
    // Takes ownership of `bev`. `server` true: expects Hello first.
    Connection(std::uint64_t id, bufferevent* bev, std::string peer, bool server, bool unix_socket,
               const ConnLimits& lim, Counters* counters);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    std::uint64_t id() const { return id_; }
    const std::string& peer() const { return peer_; }
    bool open() const { return bev_ != nullptr; }
    bool authenticated() const { return authed_; }
    std::uint32_t uid() const { return uid_; }
    Harmonics__Role role() const { return role_; }
    const std::string& name() const { return name_; }

    // Server side configuration (set before events arrive).
    void set_auth(std::string munge_socket, AuthorizeFn authorize, std::string server_name);
    void on_frame(FrameFn fn) { on_frame_ = std::move(fn); }
    // Several handlers may be added (the daemon's and the owner's reaper).
    void on_closed(ClosedFn fn) { on_closed_.push_back(std::move(fn)); }

    // Client side: mark the handshake done once HelloAck arrived.
    void set_authenticated(std::uint32_t uid) {
        authed_ = true;
        uid_ = uid;
    }

    bool send(const Harmonics__Envelope& env);
    void send_error(const std::string& reason);
    // Closes the socket at once (output not yet written is dropped unless
    // `flush`: then it is written first, bounded by a short timeout).
    void close(const std::string& why, bool flush = false);

    // Opaque per-connection data for the daemon (e.g. the job a hook serves).
    std::int64_t tag = 0;
    std::vector<std::int64_t> jobs;

private:
    static void read_cb(bufferevent* bev, void* arg);
    static void write_cb(bufferevent* bev, void* arg);
    static void event_cb(bufferevent* bev, short what, void* arg);
    void handle_read();
    void handle_hello(EnvelopePtr env);
    void finish(const std::string& why);

    std::uint64_t id_;
    bufferevent* bev_;
    std::string peer_;
    bool server_;
    bool unix_;
    ConnLimits lim_;
    Counters* counters_;
    FrameDecoder dec_;
    bool authed_ = false;
    bool closing_ = false;
    std::uint32_t uid_ = 0xffffffffu;
    Harmonics__Role role_ = HARMONICS__ROLE__ROLE_UNKNOWN;
    std::string name_;
    std::string munge_socket_;
    AuthorizeFn authorize_;
    std::string server_name_;
    std::string pending_why_;
    FrameFn on_frame_;
    std::vector<ClosedFn> on_closed_;
};

// Accepts connections on one address (TCP "host:port" or a Unix socket path)
// and owns them. Closed connections are freed from a deferred event, never
// inside their own callback.
class Listener {
public:
    using AcceptFn = std::function<void(Connection&)>;
    Listener(event_base* base, ConnLimits lim, Counters* counters);
    ~Listener();
    // Binds; false with *err. A Unix socket file is replaced and made mode 0666
    // (access is decided by the peer credential check, not by file mode).
    bool listen(const std::string& address, std::string* err);
    void on_accept(AcceptFn fn) { on_accept_ = std::move(fn); }
    void set_limits(const ConnLimits& lim) { lim_ = lim; }
    std::size_t connections() const { return conns_.size(); }
    int bound_port() const { return port_; }
    Connection* find(std::uint64_t id);
    template <class F> void for_each(F f) {
        for (auto& [id, c] : conns_)
            if (c->open()) f(*c);
    }
    void close_all(const std::string& why);

private:
    static void accept_cb(evconnlistener*, int fd, struct sockaddr* sa, int len, void* arg);
    static void reap_cb(int, short, void* arg);
    void reap_later();

    event_base* base_;
    ConnLimits lim_;
    Counters* counters_;
    evconnlistener* lev_ = nullptr;
    event* reap_ev_ = nullptr;
    bool unix_ = false;
    std::string unix_path_;
    int port_ = 0;
    std::uint64_t next_id_ = 1;
    std::map<std::uint64_t, std::unique_ptr<Connection>> conns_;
    AcceptFn on_accept_;
};

// An outgoing connection that keeps itself up: connects, sends Hello with a
// MUNGE credential, waits for HelloAck, then calls on_up. When it drops it
// retries with exponential backoff (min_backoff_s doubling up to max_backoff_s).
class Dialer {
public:
    using UpFn = std::function<void(Connection&)>;
    using DownFn = std::function<void(const std::string& why)>;
    Dialer(event_base* base, std::string address, Harmonics__Role role, std::string name,
           std::string munge_socket, ConnLimits lim, Counters* counters);
    ~Dialer();
    void on_up(UpFn fn) { on_up_ = std::move(fn); }
    void on_down(DownFn fn) { on_down_ = std::move(fn); }
    void on_frame(FrameFn fn) { on_frame_ = std::move(fn); }
    void start();
    void set_address(const std::string& a) { address_ = a; }
    // The live, authenticated connection or null.
    Connection* conn() { return (conn_ && conn_->open() && conn_->authenticated()) ? conn_.get() : nullptr; }
    double min_backoff_s = 0.2;
    double max_backoff_s = 10;
    std::uint64_t attempts() const { return attempts_; }

private:
    static void retry_cb(int, short, void* arg);
    static void reap_cb(int, short, void* arg);
    void attempt();
    void schedule_retry(const std::string& why);

    event_base* base_;
    std::string address_;
    Harmonics__Role role_;
    std::string name_;
    std::string munge_socket_;
    ConnLimits lim_;
    Counters* counters_;
    event* retry_ev_ = nullptr;
    event* reap_ev_ = nullptr;
    double backoff_s_ = 0;
    std::uint64_t attempts_ = 0;
    std::unique_ptr<Connection> conn_;
    std::unique_ptr<Connection> dead_;
    UpFn on_up_;
    DownFn on_down_;
    FrameFn on_frame_;
};

}  // namespace harmonics::wire
