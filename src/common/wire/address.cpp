#include "wire/address.h"

#include <cstdlib>

namespace harmonics::wire {

bool parse_address(const std::string& s, Address* a, std::string* err) {
    *a = Address{};
    if (s.find('/') != std::string::npos) {
        a->is_unix = true;
        a->host = s;
        return true;
    }
    std::size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon + 1 == s.size()) {
        *err = "address '" + s + "' has no port (expected host:port or a socket path)";
        return false;
    }
    std::string host = s.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    char* end = nullptr;
    long port = std::strtol(s.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port < 0 || port > 65535) {
        *err = "address '" + s + "': bad port";
        return false;
    }
    a->host = host;
    a->port = int(port);
    return true;
}

}  // namespace harmonics::wire
