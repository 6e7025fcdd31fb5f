// Harmonics' Global Coordinator: a job spanning several leaves must have one
// shift everywhere. The coordinator gives each such job an owner leaf (the
// most contended one), the owner decides, the other leaves treat the decision
// as fixed, and conflicts are resolved in a bounded number of rounds. Its
// state and messages are per job (shift, period, owner), never per link.
#pragma once

#include <map>
#include <vector>

#include "policy/harmonics_local.h"
#include "policy/holds.h"
#include "policy/outrun.h"
#include "policy/phase_groups.h"

namespace harmonics {

struct CrossLeafJob {
    JobId id = 0;
    std::vector<SwitchId> leaves;
    SwitchId owner = -1;
    JobDecision decision;     // the one decision every leaf applies
};

// The outcome of one coordinated epoch over the whole cluster.
struct CoordinationResult {
    std::map<JobId, JobDecision> jobs;       // one decision per job that loads a leaf's uplink/downlink
    std::map<JobId, SwitchId> owners;        // cross-leaf jobs only
    int rounds = 0;                          // rounds of leaf decisions run
    int unsettled = 0;                       // cross-leaf decisions still moving after the last round
    double slowest_leaf_s = 0;               // summed over rounds: each round's slowest leaf
    double coordinator_s = 0;                // the coordinator's own work
    double cpu_s = 0;                        // all leaves' work added up (what one core would spend)
    int leaves_decided = 0;
    double predicted_cost = 0;               // summed over leaves of the last round
    int grouped = 0;                         // cross-leaf jobs placed in phase families
    int families = 0;                        // ... in how many
    int overloaded = 0;                      // members still overloading a link in their window
    int refused = 0;                         // jobs of families refused this epoch
    std::string groups_explain;              // one line per phase family (phase_groups.h)
};

// What earlier epochs settled about conflicts on leaves that own neither
// job, kept so that they are not fought again every epoch (coordd keeps the
// same per job): a job handed to the leaf where it collided stays there, and
// one that had to run free does so for conflict_free_hold_s (policy/holds.h).
struct ConflictMemory {
    // Each cross-leaf job's owner as first assigned (assign_owners): coordd
    // gives a job its owner once, when it first spans two leaves, and keeps
    // it while other jobs come and go (Coordd::assign_owners).
    std::map<JobId, SwitchId> assigned;
    std::map<JobId, SwitchId> owner;
    std::map<JobId, SwitchId> adopted;   // free jobs handed to a leaf they harmed there (a subset of owner)
    std::map<JobId, double> free_until_s;
    std::map<JobId, int> free_times;
    RefusalHolds group_refused;   // jobs of phase families refused for their overloads
    // Gated jobs iterating past their period (LocalTuning::free_outrunning),
    // phase-family members included (kFamilyOutrunTolerance).
    OutrunWatch outrun;
    std::set<JobId> grouped;      // last epoch's phase-family members
    double free_hold_s = 30;
};

class GlobalCoordinator {
public:
    explicit GlobalCoordinator(int max_rounds = 3) : max_rounds_(max_rounds) {}
    // Phase groups before the owners' rounds (phase_groups.h); off by default
    // here, on in harmonics' policy unless PolicyOptions::phase_groups is false.
    void use_phase_groups(const PhaseGroupOptions& opts) {
        groups_ = opts;
        use_groups_ = true;
    }

    // Owner per cross-leaf job: of the leaves it spans, the one whose uplink
    // and downlink carry the most average load (lowest id on ties).
    std::map<JobId, SwitchId> assign_owners(const Topology& topo, const std::vector<JobProfile>& jobs) const;

    // Both tiers for the whole cluster: first, with phase groups on, the
    // coordinator places the cross-leaf jobs that share a period in phase
    // families (fixed on every leaf). Then each leaf's local scheduler decides
    // the jobs it owns with the others' cross-leaf jobs fixed at their latest
    // decision (last epoch's, or free-running when new); after each round the
    // owners' decisions are handed to the other leaves, and the leaves whose
    // fixed jobs moved decide again, for at most max_rounds rounds. Then at
    // most max_rounds conflict passes (a gated cross-leaf job colliding past
    // its slack with other gated jobs on a leaf that does not own it goes to
    // that leaf, or runs free), each followed by at most max_rounds rounds.
    // `memory` (may be null) carries the conflicts' outcomes across epochs.
    CoordinationResult plan(const Topology& topo, const std::vector<JobProfile>& jobs,
                            const std::map<JobId, JobDecision>& previous, const LocalScheduler& local,
                            double now_s, ConflictMemory* memory = nullptr) const;

private:
    int max_rounds_;
    bool use_groups_ = false;
    PhaseGroupOptions groups_;
};

}  // namespace harmonics
