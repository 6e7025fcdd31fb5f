// fair: no scheduling, max-min fair sharing. The baseline.
#include "policy/policy.h"

namespace harmonics {
namespace {
class FairPolicy : public Policy {
public:
    std::string name() const override { return "fair"; }
    Decisions decide(const Topology&, const std::vector<JobProfile>&, double, EpochReason) override {
        return {};
    }
};
}  // namespace

std::unique_ptr<Policy> make_fair_policy() { return std::make_unique<FairPolicy>(); }
}  // namespace harmonics
