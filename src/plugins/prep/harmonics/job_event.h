// A job's start or end as told to harmonics-coordd (JobEvent on its Unix
// socket, CoordSocket). Shared by prep/harmonics and harmonics-notify.
#pragma once

#include <cstdint>
#include <string>

#include "wire/client.h"

namespace harmonics::notify {

struct JobEvent {
    int64_t job_id = 0;
    uint32_t uid = 0;
    bool started = true;          // false: ended
    std::string node_list;        // Slurm hostlist, e.g. "n[1-3]"
    bool has_exit_code = false;
    int32_t exit_code = 0;
    std::string reason;           // end state: "COMPLETED", "FAILED", "TIMEOUT", ...
    double time_s = 0;            // unix seconds of the event
    double end_time_s = 0;        // started: Slurm's end time (start + time limit), unix seconds; 0: no limit
    bool end_time_known = false;  // started: end_time_s is Slurm's word (prep/harmonics); false: not seen (harmonics-notify)
};

// Where and how to reach coordd.
struct Target {
    std::string socket;           // CoordSocket
    std::string munge_socket;     // MungeSocket ("" = MUNGE's default)
    int timeout_ms = 2000;        // ConnectTimeout: each connect/handshake/ack wait
};

// Opens a notify connection to coordd (connect + Hello/HelloAck).
bool open_connection(const Target& t, const std::string& name, wire::Client* c, std::string* err);

// Sends one event on an open connection and waits for coordd's ack. False on
// any failure (the caller closes and retries later); a refusal in the ack
// (e.g. coordd's job table is full) counts as delivered: retrying would not help.
bool send_event(wire::Client& c, const JobEvent& e, int timeout_ms, std::string* err);

// Unix seconds now.
double wall_now();

}  // namespace harmonics::notify
