// Policies by name. Each policy file defines its make_*_policy factory.
#include "config.h"
#include "policy/harmonics_local.h"
#include "policy/policy.h"

namespace harmonics {

std::unique_ptr<Policy> make_fair_policy();
std::unique_ptr<Policy> make_cassini_policy(const PolicyOptions& opts);
std::unique_ptr<Policy> make_crux_policy();
#ifdef HAVE_CBC
std::unique_ptr<Policy> make_optimal_policy(const PolicyOptions& opts);
#endif

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& opts) {
    (void)opts;
    if (name == "fair") return make_fair_policy();
    if (name == "harmonics") return make_harmonics_policy(opts, local_tuning(opts));
    if (name == "cassini") return make_cassini_policy(opts);
    if (name == "crux") return make_crux_policy();
#ifdef HAVE_CBC
    if (name == "optimal") return make_optimal_policy(opts);  // null without CBC
#endif
    return nullptr;
}

std::vector<std::string> policy_names() {
    std::vector<std::string> names = {"fair", "harmonics", "cassini", "crux"};
#ifdef HAVE_CBC
    names.push_back("optimal");   // only where configure found CBC
#endif
    return names;
}

}  // namespace harmonics
