// Built when libmunge is missing: every credential operation fails, so TCP
// peers are refused rather than trusted.
#include "wire/munge_auth.h"

namespace harmonics::wire {

bool munge_available() { return false; }

bool munge_encode(const std::string&, const std::string&, std::string*, std::string* err) {
    *err = "built without MUNGE (libmunge-dev missing)";
    return false;
}

bool munge_decode(const std::string&, const std::string&, MungeIdentity*, std::string* err) {
    *err = "built without MUNGE (libmunge-dev missing)";
    return false;
}

}  // namespace harmonics::wire
