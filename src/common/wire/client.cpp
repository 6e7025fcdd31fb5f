#include "wire/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "util/clock.h"
#include "wire/address.h"
#include "wire/munge_auth.h"

namespace harmonics::wire {

namespace {
using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left < 0 ? 0 : int(left);
}

bool wait_fd(int fd, short events, int timeout_ms, std::string* err) {
    pollfd p{fd, events, 0};
    for (;;) {
        int r = ::poll(&p, 1, timeout_ms);
        if (r > 0) return true;
        if (r == 0) {
            *err = "timed out";
            return false;
        }
        if (errno != EINTR) {
            *err = std::string("poll: ") + std::strerror(errno);
            return false;
        }
    }
}

int connect_one(int family, const sockaddr* sa, socklen_t len, int timeout_ms, std::string* err) {
    int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = std::string("socket: ") + std::strerror(errno);
        return -1;
    }
    if (::connect(fd, sa, len) < 0) {
        if (errno != EINPROGRESS) {
            *err = std::strerror(errno);
            ::close(fd);
            return -1;
        }
        if (!wait_fd(fd, POLLOUT, timeout_ms, err)) {
            ::close(fd);
            return -1;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr != 0) {
            *err = std::strerror(soerr);
            ::close(fd);
            return -1;
        }
    }
    if (family != AF_UNIX) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}
}  // namespace

Client::~Client() { close(); }

Client::Client(Client&& o) noexcept
    : fd_(o.fd_), unix_(o.unix_), dec_(std::move(o.dec_)), has_offset_(o.has_offset_), offset_s_(o.offset_s_) {
    o.fd_ = -1;
}

Client& Client::operator=(Client&& o) noexcept {
    if (this != &o) {
        close();
        fd_ = o.fd_;
        unix_ = o.unix_;
        dec_ = std::move(o.dec_);
        has_offset_ = o.has_offset_;
        offset_s_ = o.offset_s_;
        o.fd_ = -1;
    }
    return *this;
}

void Client::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    dec_ = FrameDecoder(dec_.max_frame());
}

bool Client::connect(const std::string& address, int timeout_ms, std::string* err) {
    close();
    Address a;
    if (!parse_address(address, &a, err)) return false;
    if (a.is_unix) {
        sockaddr_un sun;
        if (!unix_sockaddr(a, &sun, err)) return false;
        fd_ = connect_one(AF_UNIX, reinterpret_cast<sockaddr*>(&sun), sizeof sun, timeout_ms, err);
        unix_ = true;
    } else {
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        int rc = ::getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &res);
        if (rc != 0) {
            *err = address + ": " + gai_strerror(rc);
            return false;
        }
        for (addrinfo* ai = res; ai && fd_ < 0; ai = ai->ai_next)
            fd_ = connect_one(ai->ai_family, ai->ai_addr, ai->ai_addrlen, timeout_ms, err);
        ::freeaddrinfo(res);
        unix_ = false;
    }
    if (fd_ < 0) {
        *err = "connect " + address + ": " + *err;
        return false;
    }
    return true;
}

bool Client::send(const Harmonics__Envelope& env, int timeout_ms, std::string* err) {
    if (fd_ < 0) {
        *err = "not connected";
        return false;
    }
    std::vector<std::uint8_t> buf;
    if (!encode_frame(env, buf, dec_.max_frame())) {
        *err = "message larger than the frame limit";
        return false;
    }
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::size_t off = 0;
    while (off < buf.size()) {
        ssize_t n = ::send(fd_, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += std::size_t(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (!wait_fd(fd_, POLLOUT, remaining_ms(deadline), err)) return false;
            continue;
        }
        *err = std::string("send: ") + std::strerror(errno);
        close();
        return false;
    }
    return true;
}

bool Client::recv(EnvelopePtr* env, int timeout_ms, std::string* err) {
    err->clear();
    if (fd_ < 0) {
        *err = "not connected";
        return false;
    }
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::uint8_t chunk[16384];
    for (;;) {
        FrameStatus st = dec_.next(env);
        if (st == FrameStatus::Ok) return true;
        if (st != FrameStatus::NeedMore) {
            *err = std::string("bad frame from server: ") + frame_status_name(st);
            close();
            return false;
        }
        ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n > 0) {
            dec_.feed(chunk, std::size_t(n));
            continue;
        }
        if (n == 0) {
            *err = "connection closed by server";
            close();
            return false;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (timeout_ms == 0) return false;  // poll_recv: nothing yet
            if (!wait_fd(fd_, POLLIN, remaining_ms(deadline), err)) return false;
            continue;
        }
        *err = std::string("recv: ") + std::strerror(errno);
        close();
        return false;
    }
}

bool Client::handshake(Harmonics__Role role, const std::string& name, const std::string& munge_socket,
                       int timeout_ms, std::string* err) {
    Harmonics__Hello hello = HARMONICS__HELLO__INIT;
    hello.proto_version = kProtoVersion;
    hello.role = role;
    hello.name = const_cast<char*>(name.c_str());
    std::string cred;
    // On a Unix socket the server learns our uid from the kernel; still send a
    // credential when munged is reachable, it costs little.
    std::string merr;
    if (munge_encode(munge_socket, kHelloPayload, &cred, &merr)) {
        hello.munge_cred = const_cast<char*>(cred.c_str());
    } else if (!unix_) {
        *err = merr;
        return false;
    }
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    has_offset_ = false;
    const std::int64_t sent_ns = unix_time_ns();
    if (!send(env, timeout_ms, err)) return false;
    EnvelopePtr reply;
    if (!recv(&reply, timeout_ms, err)) {
        if (err->empty()) *err = "no answer to hello";
        return false;
    }
    if (reply->body_case == HARMONICS__ENVELOPE__BODY_ERROR) {
        *err = std::string("refused: ") + reply->error->reason;
        close();
        return false;
    }
    if (reply->body_case != HARMONICS__ENVELOPE__BODY_HELLO_ACK) {
        *err = "unexpected answer to hello";
        close();
        return false;
    }
    if (!reply->hello_ack->ok) {
        *err = std::string("refused: ") + (reply->hello_ack->reason ? reply->hello_ack->reason : "");
        close();
        return false;
    }
    if (reply->hello_ack->has_server_time_ns) {
        // The server read its clock about halfway through the round trip.
        const std::int64_t mid_ns = sent_ns + (unix_time_ns() - sent_ns) / 2;
        offset_s_ = double(std::int64_t(reply->hello_ack->server_time_ns) - mid_ns) * 1e-9;
        has_offset_ = true;
    }
    return true;
}

}  // namespace harmonics::wire
