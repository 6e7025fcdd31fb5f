#include "wire/event_conn.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "util/clock.h"
#include "util/log.h"
#include "wire/address.h"
#include "wire/munge_auth.h"

namespace harmonics::wire {

bool open_daemon_loop(std::size_t max_frame_bytes, double idle_timeout_s, event_base** base, ConnLimits* lim,
                      std::string* err) {
    *base = event_base_new();
    if (!*base) {
        *err = "event_base_new failed";
        return false;
    }
    lim->max_frame = std::uint32_t(max_frame_bytes);
    lim->idle_timeout_s = idle_timeout_s;
    return true;
}

namespace {


std::string sockaddr_str(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        auto* in = reinterpret_cast<const sockaddr_in*>(sa);
        inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
    }
    if (sa->sa_family == AF_INET6) {
        auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
        inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
        return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in6->sin6_port));
    }
    return "unix";
}

const char* role_name(Harmonics__Role r) {
    switch (r) {
    case HARMONICS__ROLE__ROLE_HOOK: return "hook";
    case HARMONICS__ROLE__ROLE_SCHEDD: return "schedd";
    case HARMONICS__ROLE__ROLE_NOTIFY: return "notify";
    case HARMONICS__ROLE__ROLE_CTL: return "ctl";
    default: return "unknown";
    }
}

}  // namespace

// ---- Connection ------------------------------------------------------------

Connection::Connection(std::uint64_t id, bufferevent* bev, std::string peer, bool server, bool unix_socket,
                       const ConnLimits& lim, Counters* counters)
    : id_(id), bev_(bev), peer_(std::move(peer)), server_(server), unix_(unix_socket), lim_(lim),
      counters_(counters), dec_(lim.max_frame) {
    bufferevent_setcb(bev_, read_cb, write_cb, event_cb, this);
    // Read at most one frame's worth ahead: memory per connection stays bounded.
    bufferevent_setwatermark(bev_, EV_READ, 0, kHeaderSize + lim_.max_frame);
    // A peer gets kHelloTimeout to authenticate, then the idle timeout applies.
    double first = server_ ? (lim_.idle_timeout_s > 0 ? std::min(lim_.idle_timeout_s, kHelloTimeout_s) : kHelloTimeout_s)
                           : lim_.idle_timeout_s;
    if (first > 0) {
        timeval tv = to_timeval(first);
        bufferevent_set_timeouts(bev_, &tv, nullptr);
    }
    bufferevent_enable(bev_, EV_READ | EV_WRITE);
}

Connection::~Connection() {
    if (bev_) bufferevent_free(bev_);
}

void Connection::set_auth(std::string munge_socket, AuthorizeFn authorize, std::string server_name) {
    munge_socket_ = std::move(munge_socket);
    authorize_ = std::move(authorize);
    server_name_ = std::move(server_name);
}

bool Connection::send(const Harmonics__Envelope& env) {
    if (!bev_ || closing_) return false;
    evbuffer* out = bufferevent_get_output(bev_);
    if (evbuffer_get_length(out) > lim_.max_output) {
        if (counters_) counters_->overflow_closed++;
        close("peer does not read (output over " + std::to_string(lim_.max_output) + " bytes)");
        return false;
    }
    std::vector<std::uint8_t> buf;
    if (!encode_frame(env, buf, lim_.max_frame)) {
        HLOG_WARN("%s: message over the frame limit not sent", peer_.c_str());
        return false;
    }
    evbuffer_add(out, buf.data(), buf.size());
    if (counters_) counters_->frames_out++;
    return true;
}

void Connection::send_error(const std::string& reason) {
    Harmonics__Error e = HARMONICS__ERROR__INIT;
    e.reason = const_cast<char*>(reason.c_str());
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_ERROR;
    env.error = &e;
    send(env);
}

void Connection::close(const std::string& why, bool flush) {
    if (!bev_ || closing_) return;
    if (flush && evbuffer_get_length(bufferevent_get_output(bev_)) > 0) {
        // Let the last frame (usually an Error saying why) reach the peer;
        // write_cb finishes the close, the timeout bounds it.
        closing_ = true;
        bufferevent_disable(bev_, EV_READ);
        timeval tv = to_timeval(1.0);
        bufferevent_set_timeouts(bev_, nullptr, &tv);
        pending_why_ = why;
        return;
    }
    finish(why);
}

void Connection::finish(const std::string& why) {
    if (!bev_) return;
    bufferevent_free(bev_);
    bev_ = nullptr;
    // Copy: a handler may add another while we iterate.
    auto handlers = on_closed_;
    for (auto& fn : handlers) fn(*this, why);
}

void Connection::read_cb(bufferevent*, void* arg) { static_cast<Connection*>(arg)->handle_read(); }

void Connection::write_cb(bufferevent*, void* arg) {
    auto* c = static_cast<Connection*>(arg);
    if (c->closing_) c->finish(c->pending_why_);
}

void Connection::event_cb(bufferevent*, short what, void* arg) {
    auto* c = static_cast<Connection*>(arg);
    if (what & BEV_EVENT_CONNECTED) return;
    if (what & BEV_EVENT_TIMEOUT) {
        if (c->closing_) {
            c->finish(c->pending_why_);
            return;
        }
        if (c->counters_) c->counters_->idle_closed++;
        c->finish(c->server_ && !c->authed_ ? "no hello in time" : "idle timeout");
        return;
    }
    if (what & BEV_EVENT_EOF) {
        c->finish(c->dec_.buffered() > 0 ? "closed mid-frame (truncated)" : "closed by peer");
        if (c->dec_.buffered() > 0 && c->counters_) c->counters_->bad_frames++;
        return;
    }
    if (what & BEV_EVENT_ERROR) {
        int e = EVUTIL_SOCKET_ERROR();
        c->finish(std::string("socket error: ") + evutil_socket_error_to_string(e));
    }
}

void Connection::handle_read() {
    evbuffer* in = bufferevent_get_input(bev_);
    std::uint8_t chunk[16384];
    while (bev_ && !closing_) {
        int n = evbuffer_remove(in, chunk, sizeof chunk);
        if (n <= 0) break;
        dec_.feed(chunk, std::size_t(n));
        for (;;) {
            if (!bev_ || closing_) return;
            EnvelopePtr env;
            FrameStatus st = dec_.next(&env);
            if (st == FrameStatus::NeedMore) break;
            if (st != FrameStatus::Ok) {
                if (counters_) counters_->bad_frames++;
                HLOG_WARN("%s: %s; closing the connection", peer_.c_str(), frame_status_name(st));
                send_error(frame_status_name(st));
                close(std::string("bad frame: ") + frame_status_name(st), true);
                return;
            }
            if (counters_) counters_->frames_in++;
            if (server_ && !authed_) {
                handle_hello(std::move(env));
                continue;
            }
            if (on_frame_) on_frame_(*this, std::move(env));
        }
    }
}

void Connection::handle_hello(EnvelopePtr env) {
    auto refuse = [&](const std::string& why) {
        if (counters_) counters_->refused++;
        HLOG_WARN("refused %s (%s%s%s): %s", peer_.c_str(), role_name(role_), name_.empty() ? "" : ", ",
                  name_.c_str(), why.c_str());
        Harmonics__HelloAck ack = HARMONICS__HELLO_ACK__INIT;
        ack.ok = 0;
        ack.reason = const_cast<char*>(why.c_str());
        Harmonics__Envelope out = HARMONICS__ENVELOPE__INIT;
        out.body_case = HARMONICS__ENVELOPE__BODY_HELLO_ACK;
        out.hello_ack = &ack;
        send(out);
        close("refused: " + why, true);
    };
    if (env->body_case != HARMONICS__ENVELOPE__BODY_HELLO) {
        role_ = HARMONICS__ROLE__ROLE_UNKNOWN;
        refuse("first frame is not a hello");
        return;
    }
    const Harmonics__Hello* h = env->hello;
    role_ = h->role;
    if (h->name) name_.assign(h->name, std::min<std::size_t>(std::strlen(h->name), 128));
    if (h->proto_version != kProtoVersion) {
        refuse("protocol version " + std::to_string(h->proto_version) + ", this server speaks " +
               std::to_string(kProtoVersion));
        return;
    }
    std::uint32_t uid = 0xffffffffu;
    if (unix_) {
        // The kernel tells us who is on the other end of a Unix socket.
        ucred cr{};
        socklen_t len = sizeof cr;
        if (getsockopt(bufferevent_getfd(bev_), SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0) {
            refuse(std::string("SO_PEERCRED: ") + std::strerror(errno));
            return;
        }
        uid = cr.uid;
    } else {
        if (!h->munge_cred || !*h->munge_cred) {
            refuse("no MUNGE credential");
            return;
        }
        MungeIdentity id;
        std::string err;
        if (!munge_decode(munge_socket_, h->munge_cred, &id, &err)) {
            refuse(err);
            return;
        }
        if (id.payload != kHelloPayload) {
            refuse("MUNGE credential is not a Hello (payload must be \"" + std::string(kHelloPayload) + "\")");
            return;
        }
        uid = id.uid;
    }
    uid_ = uid;
    if (authorize_) {
        std::string why = authorize_(role_, uid);
        if (!why.empty()) {
            refuse(why);
            return;
        }
    }
    authed_ = true;
    timeval idle = to_timeval(lim_.idle_timeout_s);
    bufferevent_set_timeouts(bev_, lim_.idle_timeout_s > 0 ? &idle : nullptr, nullptr);
    Harmonics__HelloAck ack = HARMONICS__HELLO_ACK__INIT;
    ack.ok = 1;
    ack.has_uid = 1;
    ack.uid = uid;
    ack.server = const_cast<char*>(server_name_.c_str());
    // Lets the client estimate its clock's offset from ours (ProfileReport.clock_offset_s).
    ack.has_server_time_ns = 1;
    ack.server_time_ns = std::uint64_t(unix_time_ns());
    Harmonics__Envelope out = HARMONICS__ENVELOPE__INIT;
    out.body_case = HARMONICS__ENVELOPE__BODY_HELLO_ACK;
    out.hello_ack = &ack;
    send(out);
    HLOG_DEBUG("%s: authenticated %s uid %u (%s)", peer_.c_str(), role_name(role_), uid, name_.c_str());
}

// ---- Listener --------------------------------------------------------------

Listener::Listener(event_base* base, ConnLimits lim, Counters* counters)
    : base_(base), lim_(lim), counters_(counters) {
    reap_ev_ = event_new(base_, -1, 0, reap_cb, this);
}

Listener::~Listener() {
    conns_.clear();
    if (lev_) evconnlistener_free(lev_);
    if (reap_ev_) event_free(reap_ev_);
    if (unix_ && !unix_path_.empty()) ::unlink(unix_path_.c_str());
}

bool Listener::listen(const std::string& address, std::string* err) {
    Address a;
    if (!parse_address(address, &a, err)) return false;
    const unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC;
    if (a.is_unix) {
        sockaddr_un sun;
        if (!unix_sockaddr(a, &sun, err)) return false;
        ::unlink(a.host.c_str());
        lev_ = evconnlistener_new_bind(base_, accept_cb, this, flags, 64, reinterpret_cast<sockaddr*>(&sun),
                                       sizeof sun);
        if (!lev_) {
            *err = "bind " + a.host + ": " + std::strerror(errno);
            return false;
        }
        ::chmod(a.host.c_str(), 0666);
        unix_ = true;
        unix_path_ = a.host;
        return true;
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    int rc = getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &res);
    if (rc != 0) {
        *err = address + ": " + gai_strerror(rc);
        return false;
    }
    for (addrinfo* ai = res; ai && !lev_; ai = ai->ai_next)
        lev_ = evconnlistener_new_bind(base_, accept_cb, this, flags, 128, ai->ai_addr, int(ai->ai_addrlen));
    freeaddrinfo(res);
    if (!lev_) {
        *err = "bind " + address + ": " + std::strerror(errno);
        return false;
    }
    sockaddr_storage ss{};
    socklen_t sl = sizeof ss;
    getsockname(evconnlistener_get_fd(lev_), reinterpret_cast<sockaddr*>(&ss), &sl);
    port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return true;
}

void Listener::accept_cb(evconnlistener*, int fd, sockaddr* sa, int, void* arg) {
    auto* self = static_cast<Listener*>(arg);
    if (!self->unix_) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    bufferevent* bev = bufferevent_socket_new(self->base_, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
        ::close(fd);
        return;
    }
    std::uint64_t id = self->next_id_++;
    std::string peer = self->unix_ ? "unix:" + self->unix_path_ + "#" + std::to_string(id) : sockaddr_str(sa);
    auto conn = std::make_unique<Connection>(id, bev, peer, true, self->unix_, self->lim_, self->counters_);
    Connection& c = *conn;
    self->conns_.emplace(id, std::move(conn));
    if (self->counters_) self->counters_->accepted++;
    c.on_closed([self](Connection&, const std::string&) { self->reap_later(); });
    if (self->on_accept_) self->on_accept_(c);
}

void Listener::reap_later() { event_active(reap_ev_, 0, 0); }

void Listener::reap_cb(int, short, void* arg) {
    auto* self = static_cast<Listener*>(arg);
    for (auto it = self->conns_.begin(); it != self->conns_.end();) {
        if (!it->second->open())
            it = self->conns_.erase(it);
        else
            ++it;
    }
}

Connection* Listener::find(std::uint64_t id) {
    auto it = conns_.find(id);
    return it == conns_.end() || !it->second->open() ? nullptr : it->second.get();
}

void Listener::close_all(const std::string& why) {
    for (auto& [id, c] : conns_) c->close(why);
}

// ---- Dialer ----------------------------------------------------------------

Dialer::Dialer(event_base* base, std::string address, Harmonics__Role role, std::string name,
               std::string munge_socket, ConnLimits lim, Counters* counters)
    : base_(base), address_(std::move(address)), role_(role), name_(std::move(name)),
      munge_socket_(std::move(munge_socket)), lim_(lim), counters_(counters) {
    retry_ev_ = event_new(base_, -1, 0, retry_cb, this);
    reap_ev_ = event_new(base_, -1, 0, reap_cb, this);
}

Dialer::~Dialer() {
    conn_.reset();
    dead_.reset();
    if (retry_ev_) event_free(retry_ev_);
    if (reap_ev_) event_free(reap_ev_);
}

void Dialer::start() { attempt(); }

void Dialer::retry_cb(int, short, void* arg) { static_cast<Dialer*>(arg)->attempt(); }

void Dialer::reap_cb(int, short, void* arg) { static_cast<Dialer*>(arg)->dead_.reset(); }

void Dialer::schedule_retry(const std::string& why) {
    backoff_s_ = backoff_s_ <= 0 ? min_backoff_s : std::min(max_backoff_s, backoff_s_ * 2);
    HLOG_DEBUG("%s: %s; retrying in %.1f s", address_.c_str(), why.c_str(), backoff_s_);
    timeval tv = to_timeval(backoff_s_);
    event_add(retry_ev_, &tv);
}

void Dialer::attempt() {
    attempts_++;
    if (conn_) {
        dead_ = std::move(conn_);
        event_active(reap_ev_, 0, 0);
    }
    Address a;
    std::string err;
    if (!parse_address(address_, &a, &err)) {
        schedule_retry(err);
        return;
    }
    std::string cred;
    if (!munge_encode(munge_socket_, kHelloPayload, &cred, &err) && !a.is_unix) {
        HLOG_WARN("cannot authenticate to %s: %s", address_.c_str(), err.c_str());
        schedule_retry(err);
        return;
    }
    bufferevent* bev = bufferevent_socket_new(base_, -1, BEV_OPT_CLOSE_ON_FREE);
    int rc;
    if (a.is_unix) {
        sockaddr_un sun;
        if (!unix_sockaddr(a, &sun, &err)) {  // never a truncated path
            bufferevent_free(bev);
            schedule_retry(err);
            return;
        }
        rc = bufferevent_socket_connect(bev, reinterpret_cast<sockaddr*>(&sun), sizeof sun);
    } else {
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        rc = getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &res);
        if (rc == 0 && res) {
            rc = bufferevent_socket_connect(bev, res->ai_addr, int(res->ai_addrlen));
            freeaddrinfo(res);
        } else {
            rc = -1;
        }
    }
    if (rc != 0) {
        bufferevent_free(bev);
        schedule_retry("cannot connect");
        return;
    }
    conn_ = std::make_unique<Connection>(attempts_, bev, address_, false, a.is_unix, lim_, counters_);
    conn_->on_closed([this](Connection&, const std::string& why) {
        bool was_up = conn_ && conn_->authenticated();
        if (was_up && on_down_) on_down_(why);
        if (was_up) backoff_s_ = 0;
        schedule_retry(why);
    });
    conn_->on_frame([this](Connection& c, EnvelopePtr env) {
        if (!c.authenticated()) {
            if (env->body_case == HARMONICS__ENVELOPE__BODY_HELLO_ACK && env->hello_ack->ok) {
                c.set_authenticated(env->hello_ack->has_uid ? env->hello_ack->uid : 0);
                backoff_s_ = 0;
                if (on_up_) on_up_(c);
                return;
            }
            std::string why = env->body_case == HARMONICS__ENVELOPE__BODY_HELLO_ACK && env->hello_ack->reason
                                  ? env->hello_ack->reason
                                  : "unexpected answer to hello";
            HLOG_WARN("%s refused us: %s", address_.c_str(), why.c_str());
            c.close("refused: " + why);
            return;
        }
        if (on_frame_) on_frame_(c, std::move(env));
    });
    Harmonics__Hello hello = HARMONICS__HELLO__INIT;
    hello.proto_version = kProtoVersion;
    hello.role = role_;
    hello.name = const_cast<char*>(name_.c_str());
    if (!cred.empty()) hello.munge_cred = const_cast<char*>(cred.c_str());
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    conn_->send(env);
}

}  // namespace harmonics::wire
