// Addresses as written in harmonics.conf and on command lines:
// "host:port", "[v6addr]:port", or a Unix socket path (contains a '/').
#pragma once

#include <sys/un.h>

#include <string>

namespace harmonics::wire {

struct Address {
    bool is_unix = false;
    std::string host;   // or the socket path
    int port = 0;
    std::string str() const { return is_unix ? host : host + ":" + std::to_string(port); }
};

// False with *err naming what is wrong. host:port follows split_host_port
// (util/host_port.h); ":port" alone means every local address (0.0.0.0).
bool parse_address(const std::string& s, Address* a, std::string* err);

// The sockaddr of a Unix-socket address; false with *err when the path does
// not fit sun_path.
bool unix_sockaddr(const Address& a, sockaddr_un* sun, std::string* err);

}  // namespace harmonics::wire
