// Harmonics' Global Coordinator: a job spanning several leaves must have one
// shift everywhere. The coordinator gives each such job an owner leaf (the
// most contended one), the owner decides, the other leaves treat the decision
// as fixed, and conflicts are resolved in a bounded number of rounds. Its
// state and messages are per job (shift, period, owner), never per link.
#pragma once

#include <map>
#include <vector>

#include "policy/harmonics_local.h"

namespace harmonics {

struct CrossLeafJob {
    JobId id = 0;
    std::vector<SwitchId> leaves;
    SwitchId owner = -1;
    JobDecision decision;     // the one decision every leaf applies
};

class GlobalCoordinator {
public:
    // Owner per cross-leaf job: the leaf whose uplink carries the most load.
    std::map<JobId, SwitchId> assign_owners(const Topology& topo, const std::vector<JobProfile>& jobs) const;
};

}  // namespace harmonics
