// Addresses as written in harmonics.conf and on command lines:
// "host:port", "[v6addr]:port", or a Unix socket path (contains a '/').
#pragma once

#include <string>

namespace harmonics::wire {

struct Address {
    bool is_unix = false;
    std::string host;   // or the socket path
    int port = 0;
    std::string str() const { return is_unix ? host : host + ":" + std::to_string(port); }
};

// False with *err naming what is wrong.
bool parse_address(const std::string& s, Address* a, std::string* err);

}  // namespace harmonics::wire
