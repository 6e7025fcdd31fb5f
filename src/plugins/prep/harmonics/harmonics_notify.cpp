// harmonics-notify: the fallback for sites that cannot build prep/harmonics.
// Set as both PrologSlurmctld and EpilogSlurmctld; it sends the job's start
// or end to harmonics-coordd and always exits 0 quickly (a failing
// PrologSlurmctld would requeue or hold the job; coordd reconciles from Slurm).
//
//   harmonics-notify [start|end]
// Without an argument: slurmctld sets SLURM_JOB_EXIT_CODE2 ("code:signal")
// only for EpilogSlurmctld, so its presence means end. Job data come from
// SLURM_JOB_ID, SLURM_JOB_UID and SLURM_JOB_NODELIST. Slurm 22.05 gives
// PrologSlurmctld no end time: the event says none was seen, and coordd asks
// slurmctld for it once the prolog is over.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "config/harmonics_conf.h"
#include "job_event.h"

namespace {

using namespace harmonics;

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

bool parse_long(const char* s, long long* out) {
    if (!*s) return false;
    char* end = nullptr;
    *out = std::strtoll(s, &end, 10);
    return *end == '\0';
}

int run(int argc, char** argv) {
    notify::JobEvent e;
    const char* exit2 = env("SLURM_JOB_EXIT_CODE2");
    std::string which = argc > 1 ? argv[1] : (*exit2 ? "end" : "start");
    if (which == "start") {
        e.started = true;
    } else if (which == "end") {
        e.started = false;
    } else {
        std::fprintf(stderr, "harmonics-notify: say start or end (or run as PrologSlurmctld/EpilogSlurmctld)\n");
        return 0;
    }
    long long id = 0, uid = 0;
    if (!parse_long(env("SLURM_JOB_ID"), &id) || !parse_long(env("SLURM_JOB_UID"), &uid)) {
        std::fprintf(stderr, "harmonics-notify: SLURM_JOB_ID/SLURM_JOB_UID missing or not numbers\n");
        return 0;
    }
    e.job_id = id;
    e.uid = static_cast<uint32_t>(uid);
    e.node_list = env("SLURM_JOB_NODELIST");
    e.time_s = notify::wall_now();
    int code = 0, signal = 0;
    if (!e.started && std::sscanf(exit2, "%d:%d", &code, &signal) == 2) {
        e.has_exit_code = true;
        e.exit_code = signal ? 128 + signal : code;
        // Only success is certain here; other ends (failed, cancelled, timed
        // out) look alike in the environment: coordd learns them from Slurm.
        if (code == 0 && signal == 0) e.reason = "COMPLETED";
    }

    HarmonicsConfig cfg = parse_harmonics_conf(default_harmonics_conf_path());
    notify::Target t;
    t.socket = cfg.coord_socket;
    t.munge_socket = cfg.munge_socket;
    // Slurm waits for this program: keep every step short.
    t.timeout_ms = static_cast<int>(std::min(cfg.connect_timeout_s, 2.0) * 1000);
    wire::Client c;
    std::string err;
    if (!notify::open_connection(t, "harmonics-notify", &c, &err) || !notify::send_event(c, e, t.timeout_ms, &err)) {
        std::fprintf(stderr, "harmonics-notify: job %lld: %s: %s (coordd reconciles from Slurm)\n", id,
                     t.socket.c_str(), err.c_str());
        return 0;
    }
    if (!err.empty()) std::fprintf(stderr, "harmonics-notify: job %lld: %s\n", id, err.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "harmonics-notify: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "harmonics-notify: unexpected error\n");
    }
    return 0;
}
