// Blocking client side of the wire protocol, for short-lived or background
// callers: the NCCL hook's reporter thread, harmonics-notify, the PrEp
// plugin's sender thread, harmonicsctl and tests. Every call has a deadline;
// nothing here waits unbounded. The daemons use libevent instead (server.h).
#pragma once

#include <cstdint>
#include <string>

#include "wire/frame.h"

namespace harmonics::wire {

// An open connection; closes its socket when destroyed.
class Client {
public:
    Client() = default;
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    Client(Client&& o) noexcept;
    Client& operator=(Client&& o) noexcept;

    // "host:port" (IPv4/IPv6/name) or a Unix socket path (anything with a '/').
    bool connect(const std::string& address, int timeout_ms, std::string* err);
    // Sends Hello (with a MUNGE credential on TCP, optional on a Unix socket)
    // and waits for HelloAck. False with *err = the server's reason on refusal.
    // When the server sent its time, server_offset_s() is then its Unix clock
    // minus ours at the round trip's midpoint (error: at most half the trip).
    bool handshake(Harmonics__Role role, const std::string& name, const std::string& munge_socket,
                   int timeout_ms, std::string* err);
    bool send(const Harmonics__Envelope& env, int timeout_ms, std::string* err);
    // Waits for one envelope; false on timeout, close or a bad frame.
    bool recv(EnvelopePtr* env, int timeout_ms, std::string* err);
    // Like recv but returns at once with false/*err empty when nothing is buffered.
    bool poll_recv(EnvelopePtr* env, std::string* err) { return recv(env, 0, err); }

    void close();
    bool is_open() const { return fd_ >= 0; }
    bool is_unix() const { return unix_; }
    int fd() const { return fd_; }
    void set_max_frame(std::uint32_t m) { dec_ = FrameDecoder(m); }
    bool has_server_offset() const { return has_offset_; }
    double server_offset_s() const { return offset_s_; }

private:
    int fd_ = -1;
    bool unix_ = false;
    FrameDecoder dec_;
    bool has_offset_ = false;
    double offset_s_ = 0;
};

}  // namespace harmonics::wire
