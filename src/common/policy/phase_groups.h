// Phase groups: the Global Coordinator's own plan for cross-leaf jobs that
// can share one period (doc/policies.md, "Phase groups").
//
// Owners plan a cross-leaf job on their own leaf only; a job scattered over
// 8-28 leaves meets, on each of the others, jobs whose owners planned them
// elsewhere, and with one model everywhere almost every owner ended up
// leaving its jobs free (a 1,024-node sweep gated 12 % of job-epochs and
// gained nothing over fair sharing). What works there is a structure no
// single leaf can see: one period P for the whole family, cut into K windows
// (each long enough for the longest burst plus a guard), and every job placed
// in one window so that on every leaf link the jobs of one window fit the
// link together. Which window each job takes is a constraint problem over the
// whole family (a job's window must fit on all its leaves at once), solved
// here by simulated annealing with a work budget. Everything decided is per
// job (period, origin, window), as the coordinator's messages are.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/job.h"
#include "policy/harmonics_local.h"
#include "policy/leaf_loads.h"
#include "policy/policy.h"
#include "topology/topology.h"

namespace harmonics {

struct PhaseGroupOptions {
    double slot_s = 0.001;        // windows start on this grid
    // A family's period is on this finer grid: rounding the longest target
    // up to a whole slot stretched every member by up to one more slot, 1.3 %
    // of bert-base's 75 ms (128 nodes, one model: +3.65 -> +4.16 %). The
    // gates take any period; the owners' slot grids round fixed members'.
    double period_step_s = 0.0001;
    double guard = 0.01;          // slack of P over each member's T, and the gap behind each window's bursts
    double max_stretch = 0.05;    // P exceeds no member's guarded T by more than this
    // A family in force keeps a member whose measured T has since moved by
    // this much either way (the local scheduler's keep_tolerance): noise in
    // the hooks' measurements must not reshuffle running jobs.
    double keep_tolerance = 0.03;
    // Annealing moves per member of a new family (the budget is counted in
    // moves, so the same inputs give the same plan on any host).
    std::int64_t moves_per_job = 20000;
    // ... and at most this many for one family, which bounds the coordinator's
    // first plan (about 0.5 s here for the 958 members of a one-model 8,192-node
    // cluster, against 3.9 s uncapped, which left 183 of them overloaded
    // instead of 217: doc/scale.md). A 1,024-node family of 111 needs 2.2 M.
    std::int64_t max_moves = 2500000;
    // A new family is taken only if at most this share of its members still
    // overload a link in their window (those collide; the rest are clean).
    // Measured on one-model sweeps (doc/scale.md): 0.1 refused gpt3-6.7b's
    // family at 1,024 nodes (14 of 111 members, +0.7 % on fair instead of
    // +8.3 %); families where a quarter collide are rare below average
    // overload, and above it (4:1 uplinks) almost every member collides.
    double max_dirty_share = 0.25;
    // A family whose best windows still leave members overloaded gets up to
    // this much longer a period, within overload_stretch of every member's
    // guarded T: the overloaded members' late bursts run into the next
    // window on every leaf they cross, and the slack lets those they delay
    // catch up before they pass the delay on (doc/scale.md, "Where the rest
    // of the gap goes"). Measured at 1,024 nodes, one model, against fair:
    // bert-large +2.75 % without, +3.54 % at 2 % (capped by max_stretch),
    // +4.34 / +4.51 % at 3 / 4 % within 10 %; a third of the releases late
    // at 2 %, under a fifth at 4 %; 3 % the best over five models.
    double overload_slack = 0.03;
    double overload_stretch = 0.10;   // phase_group_options(): twice max_stretch
    // A family in force at the longest period its overload stretch allows,
    // with more than this share of its members still overloaded and no
    // better planned again, is dissolved (its members go back to their
    // owners, held out of new families) rather than kept. Such a family took
    // the overload slack plan after plan: gpt3-6.7b at 1,024 nodes, random
    // phases, ran at 4,903.7 ms, 8.6-11.1 % over its members' T where fair
    // sharing slowed them by 10.9 %, its 39 members 5.7 % slower than under
    // fair (doc/scale.md, "Stop 45"). Measured against keeping it: that row
    // -1.58 -> -0.47 % (seeds 1-5: mean -1.40 -> -0.90 %), learnt in four
    // -0.98 -> -0.03 %, bert-large at 1,024 nodes random -0.55 -> +0.96 %;
    // nothing else in the batteries moved by more than 0.12. 0.35 and 0.75
    // (without the stretch condition) gave the same within 0.5 point. 1 or
    // more: never. A family at its own period stays: its overload may be a
    // member's that left to run free (daemons.family_far).
    double dissolve_dirty_share = 0.5;
    // A new family is formed only where the stretch its period puts on its
    // members (P / T - 1, their mean) is at most this many times what running
    // free costs them (the queueing estimate of policy/free_running.h on each
    // member's busiest link, their mean); else its jobs stay with their
    // owners, and it is tried again at the next plan. Learnt one by one, the
    // first five jobs of a one-model cluster were offered a family 2.4 % over
    // their T where running free cost them 0.5 %; formed, every later job
    // joined it (bert-large, 128 nodes, learnt in four, seed 4: +1.41 % on
    // fair; not formed, the family planned a moment later gave +5.11 %).
    // The estimate is low on these links (a third of the collisions
    // measured, doc/scale.md "Stop 23"), hence a factor. Means of seeds 1-5
    // (doc/scale.md, "Stop 46"): 1 gained most at 128 nodes learnt in four
    // (+0.6 to +1.3 points) but lost at random phases (gpt3-6.7b at 1,024
    // nodes -0.90 -> -1.39 %, the battery's pairs -0.038 -> -0.132 %); 2
    // lost on no mean (+0.3 to +0.8 points learnt, 1,024 nodes random -0.90
    // -> -0.66 %); 3 and 4 as 2 at 128 nodes; 0.5 lost on all rows but one.
    // 0: off.
    double free_running_factor = 2;
    // ... but where every job on a member's links has a phase (its latest
    // collective, or its slots), what running free costs it is where their
    // bursts stand: each job's bursts over the next this many of its
    // periods (or its time left, if shorter), slowed where a link is over
    // capacity, taken as it is (no factor). Jobs of one model keep their
    // phases for many periods: at random phases the queueing estimate formed
    // families among rings that hardly met, at one phase it missed that they
    // always did. Measured against fair (doc/scale.md, "Stop 47"): bert-large
    // at 1,024 nodes, means of seeds 1-5, random +1.44 -> +2.10 %, learnt in
    // four +0.87 -> +2.27 %; gpt3-6.7b at 128 nodes, seeds 1-20, random
    // -0.18 -> +0.05 %, aligned +7.93 -> +8.15 %; the batteries' two-model
    // pairs lost a little (random +0.028 -> +0.006 %, learnt -0.009 ->
    // -0.060 %). 5 and 10 periods: less at 128 nodes learnt; 200: less
    // everywhere; only jobs within max_stretch of each other's period:
    // the pairs unchanged, the gains gone. 0: the queueing estimate only.
    double standing_periods = 20;
    // A new family is formed only where its members' stretch plus the wait
    // each one's first slot costs it (over its time left, as the Local
    // Scheduler charges its plans: policy/gate_waits.h) is at most what
    // running free costs them. gpt3-6.7b rings (4.5 s periods, 5-19 of
    // them) gated at random phases wait up to a period, as much as a family
    // saves them (doc/scale.md, "Stop 48"). Tried before the standing
    // estimate (stop 47), it lost where the queueing estimate missed the
    // collisions of an aligned start. Off with ChargeWaits=no, as the
    // leaves' charge.
    bool charge_waits = true;
    unsigned seed = 1;
};

// The options from the policy's (slot, seed) and the local scheduler's
// tuning (guard, max stretch, keep tolerance): what the coordinator of
// harmonics-sim and of harmonics-coordd runs.
PhaseGroupOptions phase_group_options(const PolicyOptions& opts, const LocalTuning& tuning);

// One family: members share period_s and origin_s; member m's first
// collective of each iteration starts at window(m) · period_s / groups.
struct PhaseFamily {
    double period_s = 0;
    double origin_s = 0;
    int groups = 0;
    std::vector<JobId> members;       // gated, each in a window
    std::vector<JobId> free_riders;   // room in every window on all their links: run free
    int dirty = 0;                // members whose window overloads one of their links
    double overload = 0;          // summed over links and windows, in capacity fractions
    bool kept = false;            // carried over from the previous epoch
};

struct PhaseGroupPlan {
    std::map<JobId, JobDecision> jobs;   // every grouped job's decision (group >= 0), free riders' (free)
    std::vector<PhaseFamily> families;
    std::vector<JobId> refused;          // members of families formed and refused, or dissolved (too many overloads)
    std::int64_t moves = 0;              // annealing moves spent (the plan's work)
    std::string explain;                 // one line per family, for logs
};

// Plans phase groups among `eligible` (indices into `jobs`: cross-leaf jobs
// the coordinator may decide). Families in force in `previous` (decisions
// with group >= 0) keep their period, origin and every member's window while
// those still fit (one that came to overload past the dirty share is planned
// again, or past the dissolve share dissolved: its members are `refused`);
// newcomers join a family where they fit without overload
// (those that come together, together), else new families are formed. A
// member with room beside every window on all its links is a free rider:
// free (its decision carries the family's window count, group < 0), and it
// stays one while it fits the period and the windows as they stood. A job
// left out of every family is not in the plan (its owner decides it as
// before). Jobs whose links cannot be overloaded whatever their phases are
// left out: nothing to gain.
// A new family whose members all have one owner in `owners` is left to that
// owner: it plans them together, more finely than windows do.
PhaseGroupPlan plan_phase_groups(const Topology& topo, const std::vector<JobProfile>& jobs,
                                 const std::vector<size_t>& eligible, const std::map<JobId, JobDecision>& previous,
                                 const std::map<JobId, SwitchId>& owners, const PhaseGroupOptions& opts,
                                 double now_s);

}  // namespace harmonics
