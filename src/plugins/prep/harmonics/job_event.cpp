// JobEvent to harmonics-coordd over the blocking wire client (job_event.h).
#include "job_event.h"

#include <ctime>

namespace harmonics::notify {

bool open_connection(const Target& t, const std::string& name, wire::Client* c, std::string* err) {
    if (!c->connect(t.socket, t.timeout_ms, err)) return false;
    if (!c->handshake(HARMONICS__ROLE__ROLE_NOTIFY, name, t.munge_socket, t.timeout_ms, err)) {
        c->close();
        return false;
    }
    return true;
}

bool send_event(wire::Client& c, const JobEvent& e, int timeout_ms, std::string* err) {
    Harmonics__JobEvent ev = HARMONICS__JOB_EVENT__INIT;
    ev.job_id = e.job_id;
    ev.uid = e.uid;
    ev.state = e.started ? HARMONICS__JOB_STATE__JOB_STARTED : HARMONICS__JOB_STATE__JOB_ENDED;
    ev.node_list = e.node_list.empty() ? nullptr : const_cast<char*>(e.node_list.c_str());
    ev.has_exit_code = e.has_exit_code;
    ev.exit_code = e.exit_code;
    ev.reason = e.reason.empty() ? nullptr : const_cast<char*>(e.reason.c_str());
    ev.has_time_s = e.time_s > 0;
    ev.time_s = e.time_s;
    ev.has_end_time_s = e.started && e.end_time_s > 0;
    ev.end_time_s = e.end_time_s;
    ev.has_end_time_known = e.started && e.end_time_known;
    ev.end_time_known = e.end_time_known;
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_JOB_EVENT;
    env.job_event = &ev;
    if (!c.send(env, timeout_ms, err)) return false;
    wire::EnvelopePtr reply;
    if (!c.recv(&reply, timeout_ms, err)) {
        if (err->empty()) *err = "no answer from coordd";
        return false;
    }
    if (reply->body_case == HARMONICS__ENVELOPE__BODY_ERROR) {
        *err = std::string("coordd: ") + (reply->error->reason ? reply->error->reason : "error");
        return false;
    }
    if (reply->body_case != HARMONICS__ENVELOPE__BODY_JOB_EVENT_ACK || reply->job_event_ack->job_id != e.job_id) {
        *err = "coordd answered with something other than this job's ack";
        return false;
    }
    if (!reply->job_event_ack->ok)
        *err = std::string("coordd refused: ") +
               (reply->job_event_ack->reason ? reply->job_event_ack->reason : "no reason given");
    return true;
}

double wall_now() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

}  // namespace harmonics::notify
