// Cassini's unified circle for one link (NSDI'24, "geometric abstraction"):
// every job sharing the link draws its iteration on a circle whose perimeter
// is the lcm of their periods (capped), its communication as arcs of demand;
// rotating the jobs against each other changes how much demand exceeds the
// link's capacity. The compatibility score is 1 - (excess demand over
// capacity, averaged over the circle); Cassini picks the rotations that
// maximise it. No I/O.
#pragma once

#include <vector>

#include "model/job.h"
#include "topology/topology.h"

namespace harmonics {

struct CassiniCircle {
    double perimeter_s = 0;   // lcm of the jobs' periods, capped
    int bins = 0;             // the circle is evaluated on this many equal arcs
    double bin_s = 0;         // perimeter_s / bins
};

// periods_s are the jobs' (slot-rounded) periods. The perimeter is their lcm
// on a grid of slot_s, capped at max_rounds times the longest period; the
// circle is cut into at most max_bins arcs (coarser than slot_s when long).
CassiniCircle make_circle(const std::vector<double>& periods_s, double slot_s, int max_rounds, int max_bins);

// The job's demand on `link` as a fraction of `capacity_Bps`, averaged over
// each arc of the circle, at rotation 0 (its first collective at angle 0),
// repeating every period_s.
std::vector<double> circle_demand(const CassiniCircle& c, const JobProfile& job, LinkId link, double capacity_Bps,
                                  double period_s);

// 1 - mean over arcs of max(0, sum of the rotated demands - 1).
// rotation[i] rotates demand[i] forward by that many arcs.
double compatibility_score(const std::vector<std::vector<double>>& demand, const std::vector<int>& rotation);

// The rotations (one per job, in arcs) maximising the compatibility score,
// each chosen from candidates[i] (a job with one candidate is held fixed).
// Exhaustive when the number of combinations is at most `exhaustive_limit`,
// otherwise greedy insertion by decreasing load then coordinate descent.
// Ties go to the earliest candidate.
struct CircleRotation {
    std::vector<int> rotation;
    double score = 0;
    bool exhaustive = false;
};
CircleRotation best_rotation(const std::vector<std::vector<double>>& demand,
                             const std::vector<std::vector<int>>& candidates, long exhaustive_limit);

}  // namespace harmonics
