// How long the coordinator keeps a job away from what it failed at: a
// conflict on a leaf that owns neither job (the job runs free for a while),
// and a phase family refused for its overloads (no new family for a while).
// The coordinator of harmonics-sim and harmonics-coordd keep the same.
#pragma once

#include <iterator>
#include <map>
#include <set>

#include "model/job.h"

namespace harmonics {

// Epochs a job that had to run free does so (in harmonics' policy and in
// coordd), doubled each further time, and the first hold of a refused family.
constexpr double kConflictFreeHoldEpochs = 30;

// The (times + 1)-th hold: hold_s, doubled each further time, at most 32
// times hold_s.
inline double conflict_free_hold_s(double hold_s, int times) {
    return hold_s * double(1 << (times < 5 ? times : 5));
}

// Drops from a map keyed by job every job not in `present` (those that ended).
template <typename Map>
void forget_departed(Map& m, const std::set<JobId>& present) {
    for (auto it = m.begin(); it != m.end();) it = present.count(it->first) ? std::next(it) : m.erase(it);
}

// Jobs of phase families refused for their overloads, held out of new
// families: the annealing is the costly part of a plan (about 0.5 s for a
// one-model 8,192-node family), and a family refused again and again on the
// same crowded leaves would pay it after every hold. Each further refusal of
// a job doubles its hold (conflict_free_hold_s); joining a family clears it.
class RefusalHolds {
public:
    bool held(JobId id, double now_s) const {
        auto it = until_s_.find(id);
        return it != until_s_.end() && now_s < it->second;
    }
    // Refused once more at now_s: held for its next hold, which it returns.
    double refuse(JobId id, double now_s, double hold_s) {
        const double h = conflict_free_hold_s(hold_s, times_[id]++);
        until_s_[id] = now_s + h;
        return h;
    }
    // Held out of families until `until_s` without counting a refusal: a
    // member that left its family for outrunning it, whose hold doubles with
    // each time it had to run free (conflict_free_hold_s), joins or not.
    void hold(JobId id, double until_s) {
        double& u = until_s_[id];
        if (u < until_s) u = until_s;
    }
    // In a family taken, or gone: a later refusal starts from the first hold.
    void forget(JobId id) {
        until_s_.erase(id);
        times_.erase(id);
    }
    void forget_all_but(const std::set<JobId>& present) {
        forget_departed(times_, present);
        forget_departed(until_s_, present);
    }
    int times(JobId id) const {
        auto it = times_.find(id);
        return it == times_.end() ? 0 : it->second;
    }

private:
    std::map<JobId, double> until_s_;
    std::map<JobId, int> times_;
};

}  // namespace harmonics
