// Policies by name. Each policy file defines its make_*_policy factory.
#include "policy/policy.h"

namespace harmonics {

std::unique_ptr<Policy> make_fair_policy();

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& opts) {
    (void)opts;
    if (name == "fair") return make_fair_policy();
    return nullptr;
}

std::vector<std::string> policy_names() { return {"fair"}; }

}  // namespace harmonics
