// prep/harmonics: tells harmonics-coordd when a job starts and ends, for
// every end (completed, failed, cancelled, timed out, node failure, ...).
//
// slurmctld calls the *_slurmctld callbacks while holding its job write lock:
// they copy job id, uid, node list and state, hand the copy to EventSender's
// bounded queue and return at once (*async = false, the job never waits for
// us). In slurmd (PrEp plugins load there too) the plugin does nothing.
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <sys/wait.h>

// Harmonics first: Slurm's internal headers define macros (list_*, xfree, ...).
#include "config/harmonics_conf.h"
#include "event_sender.h"

extern "C" {
#include <slurm/spank.h>   // slurm_info, slurm_error (resolved in slurmctld)
#include "src/common/prep.h"
#include "src/common/run_in_daemon.h"
#include "src/slurmctld/slurmctld.h"
}

extern "C" {
extern const char plugin_name[] = "Harmonics job start/end notifier";
extern const char plugin_type[] = "prep/harmonics";
extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using harmonics::notify::EventSender;
using harmonics::notify::JobEvent;

constexpr std::size_t kQueueCapacity = 4096;   // ~1 MB of events while coordd is away

std::unique_ptr<EventSender> g_sender;

// Name of a finished job's state, as `sacct`/`squeue` print it.
const char* end_reason(uint32_t state) {
    switch (state & JOB_STATE_BASE) {
    case JOB_COMPLETE: return "COMPLETED";
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_FAILED: return "FAILED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_OOM: return "OUT_OF_MEMORY";
    case JOB_RUNNING: return "RUNNING";   // requeued or still finishing
    default: return "UNKNOWN";
    }
}

// Copies what coordd needs; runs under the job write lock.
JobEvent event_of(const job_record_t* job, bool started) {
    JobEvent e;
    e.job_id = job->job_id;
    e.uid = job->user_id;
    e.started = started;
    if (job->nodes) e.node_list = job->nodes;
    e.time_s = harmonics::notify::wall_now();
    // Set when the job was started (start_time + time_limit); a job without
    // a limit gets a year from Slurm, which means nothing to weigh.
    if (started && job->time_limit != INFINITE && job->time_limit != NO_VAL && job->end_time > 0)
        e.end_time_s = static_cast<double>(job->end_time);
    e.end_time_known = started;
    if (!started) {
        e.reason = end_reason(job->job_state);
        if (job->exit_code != NO_VAL) {
            const int st = static_cast<int>(job->exit_code);
            e.has_exit_code = true;
            e.exit_code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
        }
    }
    return e;
}

int notify(job_record_t* job, bool* async, bool started) {
    if (async) *async = false;
    if (!g_sender || !job) return SLURM_SUCCESS;
    try {
        g_sender->push(event_of(job, started));
    } catch (const std::exception& e) {
        slurm_error("%s: job %u: %s; coordd will reconcile from Slurm", plugin_type, job->job_id, e.what());
    } catch (...) {
        slurm_error("%s: job %u: event lost; coordd will reconcile from Slurm", plugin_type, job->job_id);
    }
    return SLURM_SUCCESS;
}

}  // namespace

extern "C" {

int init(void) {
    if (!running_in_slurmctld()) return SLURM_SUCCESS;
    try {
        const std::string path = harmonics::default_harmonics_conf_path();
        harmonics::HarmonicsConfig cfg = harmonics::parse_harmonics_conf(path);
        harmonics::notify::Target t;
        t.socket = cfg.coord_socket;
        t.munge_socket = cfg.munge_socket;
        t.timeout_ms = static_cast<int>(cfg.connect_timeout_s * 1000);
        g_sender = std::make_unique<EventSender>(t, kQueueCapacity, [](bool error, const std::string& line) {
            if (error)
                slurm_error("%s: %s", plugin_type, line.c_str());
            else
                slurm_info("%s: %s", plugin_type, line.c_str());
        });
        slurm_info("%s: %s loaded; job events go to %s", plugin_type, path.c_str(), t.socket.c_str());
    } catch (const std::exception& e) {
        slurm_error("%s: %s; job events are not sent (fail open, coordd reconciles from Slurm)", plugin_type,
                    e.what());
    } catch (...) {
        slurm_error("%s: init failed; job events are not sent (fail open)", plugin_type);
    }
    return SLURM_SUCCESS;   // never keep slurmctld from starting
}

void fini(void) {
    try {
        g_sender.reset();
    } catch (...) {
    }
}

void prep_p_register_callbacks(prep_callbacks_t* callbacks) { (void)callbacks; }

int prep_p_prolog(job_env_t* job_env, slurm_cred_t* cred) {
    (void)job_env;
    (void)cred;
    return SLURM_SUCCESS;
}

int prep_p_epilog(job_env_t* job_env, slurm_cred_t* cred) {
    (void)job_env;
    (void)cred;
    return SLURM_SUCCESS;
}

int prep_p_prolog_slurmctld(job_record_t* job_ptr, bool* async) { return notify(job_ptr, async, true); }

int prep_p_epilog_slurmctld(job_record_t* job_ptr, bool* async) { return notify(job_ptr, async, false); }

// slurmctld runs the prolog stage only when some PrEp plugin asks for it.
void prep_p_required(prep_call_type_t type, bool* required) {
    *required = g_sender && (type == PREP_PROLOG_SLURMCTLD || type == PREP_EPILOG_SLURMCTLD);
}

}  // extern "C"
