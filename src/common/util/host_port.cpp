#include "util/host_port.h"

#include <cerrno>
#include <cstdlib>

namespace harmonics {

namespace {
bool fail(std::string* why, const std::string& what) {
    if (why) *why = what;
    return false;
}
}  // namespace

bool split_host_port(const std::string& addr, std::string* host, int* port, std::string* why) {
    std::size_t colon;
    std::string h;
    if (!addr.empty() && addr[0] == '[') {
        const std::size_t close = addr.find(']');
        if (close == std::string::npos) return fail(why, "'[' without ']'");
        if (close + 1 >= addr.size() || addr[close + 1] != ':') return fail(why, "no port after ']'");
        h = addr.substr(1, close - 1);
        colon = close + 1;
    } else {
        colon = addr.rfind(':');
        if (colon == std::string::npos) return fail(why, "no port");
        h = addr.substr(0, colon);
        if (h.find(':') != std::string::npos) return fail(why, "an IPv6 host needs brackets, e.g. [::1]:6829");
    }
    if (h.empty()) return fail(why, "no host");
    const std::string p = addr.substr(colon + 1);
    if (p.empty()) return fail(why, "no port");
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(p.c_str(), &end, 10);
    if (p[0] < '0' || p[0] > '9' || *end != '\0' || errno != 0 || n < 1 || n > 65535)
        return fail(why, "port '" + p + "' is not a number from 1 to 65535");
    *host = h;
    *port = static_cast<int>(n);
    return true;
}

}  // namespace harmonics
