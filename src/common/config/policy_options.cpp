#include "config/policy_options.h"

namespace harmonics {

PolicyOptions policy_options(const HarmonicsConfig& cfg) {
    PolicyOptions o;
    o.time_limit_s = cfg.solver_time_limit_s;
    o.slot_s = cfg.slot_s;
    o.change_threshold = cfg.change_threshold;
    o.local_budget_s = cfg.local_budget_s;
    o.max_stretch = cfg.max_stretch > 1 ? cfg.max_stretch - 1 : 0;
    o.guard = cfg.guard;
    o.drift_horizon_s = cfg.drift_horizon_s;
    o.epoch_s = cfg.epoch_s;
    o.seed = cfg.seed;
    o.phase_groups = cfg.phase_groups;
    o.free_outrunning = cfg.free_outrunning;
    o.charge_waits = cfg.charge_waits;
    return o;
}

}  // namespace harmonics
