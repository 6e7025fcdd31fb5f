// A job's decision on the wire: the one conversion between policy's
// JobDecision and the Schedule message that schedd, coordd and the NCCL hook
// exchange, so a field added to one reaches every daemon.
#ifndef HARMONICS_WIRE_SCHEDULE_MSG_H
#define HARMONICS_WIRE_SCHEDULE_MSG_H

#include <cstdint>

#include "policy/policy.h"
#include "src/common/proto/harmonics.pb-c.h"

namespace harmonics::wire {

// owner_leaf of a decision coordd made itself: a phase family's member
// (policy/phase_groups.h), fixed on every leaf it crosses. Not a switch name
// Slurm accepts in topology.conf, so no leaf takes it for its own.
inline constexpr const char* kCoordinatorOwner = "(coordinator)";

// Fills *s (initialised by the caller) with d; `owner` must outlive s.
void fill_schedule(Harmonics__Schedule* s, JobId id, const JobDecision& d, std::uint64_t epoch, const char* owner);

// The decision a Schedule carries (owner_leaf is the caller's to resolve).
JobDecision decision_of(const Harmonics__Schedule& s);

}  // namespace harmonics::wire

#endif
