#include "wire/schedule_msg.h"

namespace harmonics::wire {

void fill_schedule(Harmonics__Schedule* s, JobId id, const JobDecision& d, std::uint64_t epoch, const char* owner) {
    s->job_id = id;
    s->gated = d.gated;
    s->has_shift_s = s->has_period_s = s->has_origin_s = s->has_epoch = 1;
    s->shift_s = d.shift_s;
    s->period_s = d.period_s;
    s->origin_s = d.origin_s;
    s->epoch = epoch;
    if (d.late_s >= 0) {
        s->has_late_s = 1;
        s->late_s = d.late_s;
    }
    if (d.group >= 0) {
        s->has_group = s->has_groups = 1;
        s->group = d.group;
        s->groups = d.groups;
    } else if (!d.gated && d.groups >= 2) {
        // A free rider: no window, but its family's window count, so that a
        // restarted coordd takes it back as a rider in force.
        s->has_groups = 1;
        s->groups = d.groups;
    }
    if (d.slack_margin > 0) {
        s->has_slack_margin = 1;
        s->slack_margin = d.slack_margin;
    }
    s->owner_leaf = const_cast<char*>(owner);
}

JobDecision decision_of(const Harmonics__Schedule& s) {
    JobDecision d;
    d.gated = s.gated;
    d.shift_s = s.has_shift_s ? s.shift_s : 0;
    d.period_s = s.has_period_s ? s.period_s : 0;
    d.origin_s = s.has_origin_s ? s.origin_s : 0;
    d.late_s = s.has_late_s && s.late_s >= 0 ? s.late_s : -1;
    d.slack_margin = s.has_slack_margin && s.slack_margin > 0 ? s.slack_margin : -1;
    if (s.has_group && s.has_groups && s.group >= 0 && s.groups > s.group) {
        d.group = s.group;
        d.groups = s.groups;
    } else if (!s.has_group && s.has_groups && !s.gated && s.groups >= 2) {
        d.groups = s.groups;   // a free rider beside a family of that many windows
    }
    return d;
}

}  // namespace harmonics::wire
