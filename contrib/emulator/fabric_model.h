// The emulated fabric's state: the communication phases in flight, each
// progressing at its max-min fair rate (the same maxmin_rates the simulator
// uses), rates recomputed whenever a phase starts or ends. Time is model
// time in seconds; the server maps it to wall time with a scale factor.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics::emu {

struct Completion {
    JobId job;
    std::uint64_t seq;
    double start_s;
    double end_s;
};

class FabricModel {
public:
    explicit FabricModel(const Topology& topo);

    // A job's collective `seq` enters the fabric at model time now_s. Phases
    // due to finish before then finish first, at their own times (the next
    // advance() returns them), so the newcomer shares no link with them.
    void start(JobId job, std::uint64_t seq, const CommPhase& phase, double now_s);
    // Moves the fabric to now_s; returns the phases that finished by then,
    // each with its exact finishing time.
    std::vector<Completion> advance(double now_s);
    // Model time of the next completion, or +inf when nothing is in flight.
    double next_completion_s() const;
    std::size_t in_flight() const { return flows_.size(); }

private:
    struct Flow {
        JobId job;
        std::uint64_t seq;
        std::vector<LinkUse> links;
        double remaining;   // bytes per edge still to move
        double rate = 0;    // bytes/s per edge
        double start_s;
    };
    void recompute_rates();
    void progress_to(double t);

    std::vector<double> capacity_;
    std::vector<Flow> flows_;
    std::vector<Completion> finished_;   // due before a start(), not yet returned
    double now_s_ = 0;
};

}  // namespace harmonics::emu
