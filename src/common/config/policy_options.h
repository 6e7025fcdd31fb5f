// The policy parameters of harmonics.conf in the form the policies take
// (policy/policy.h), so harmonics-schedd and harmonics-sim build them alike.
#pragma once

#include "config/harmonics_conf.h"
#include "policy/policy.h"

namespace harmonics {

PolicyOptions policy_options(const HarmonicsConfig& cfg);

}  // namespace harmonics
