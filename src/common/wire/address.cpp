#include "wire/address.h"

#include <sys/socket.h>

#include <cstring>

#include "util/host_port.h"

namespace harmonics::wire {

bool parse_address(const std::string& s, Address* a, std::string* err) {
    *a = Address{};
    if (s.find('/') != std::string::npos) {
        a->is_unix = true;
        a->host = s;
        return true;
    }
    std::string why;
    const std::string hp = !s.empty() && s[0] == ':' ? "0.0.0.0" + s : s;
    if (!split_host_port(hp, &a->host, &a->port, &why)) {
        *a = Address{};
        *err = "address '" + s + "': " + why + " (expected host:port or a socket path)";
        return false;
    }
    return true;
}

bool unix_sockaddr(const Address& a, sockaddr_un* sun, std::string* err) {
    *sun = sockaddr_un{};
    sun->sun_family = AF_UNIX;
    if (a.host.size() >= sizeof sun->sun_path) {
        *err = "socket path too long: " + a.host;
        return false;
    }
    std::memcpy(sun->sun_path, a.host.c_str(), a.host.size() + 1);
    return true;
}

}  // namespace harmonics::wire
