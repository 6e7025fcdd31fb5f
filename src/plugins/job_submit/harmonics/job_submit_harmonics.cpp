// job_submit/harmonics: rack-aware placement hints for multi-node jobs.
//
// slurmctld calls job_submit() while it holds its config, job, node and
// partition locks, so this never blocks: it reads only harmonics.conf (once,
// in init) and coordd's leaf summary (a local file, re-read only when it
// changes). Whatever goes wrong, the job is accepted unchanged and one log
// line says why (fail open). The decision itself lives in steer.cpp.
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>
// Exported by slurmctld's libslurmfull; strings handed to job_desc must come
// from its allocator because slurmctld xfree()s them.
char* slurm_xstrdup(const char* str);
void slurm_xfree(void** item);
}

#include "config/harmonics_conf.h"
#include "state/leaf_summary.h"
#include "steer.h"

extern "C" {
extern const char plugin_name[] = "Harmonics rack-aware job placement";
extern const char plugin_type[] = "job_submit/harmonics";
extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using namespace harmonics;

struct PluginState {
    std::mutex mu;
    bool config_ok = false;
    std::string config_error;       // why the plugin is failing open
    steer::Settings settings;
    std::unique_ptr<state::SummaryReader> reader;
    std::string last_fail_open;     // last reason logged, to log each outage once
};

PluginState* g_state = nullptr;

double now_s() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

bool given(const char* s) { return s && *s; }

// Log a fail-open reason once until its kind changes or steering works again.
void fail_open(PluginState& st, const std::string& kind, const std::string& why) {
    if (kind == st.last_fail_open) return;
    st.last_fail_open = kind;
    slurm_info("%s: %s; jobs pass unchanged (fail open)", plugin_type, why.c_str());
}

void replace(char** field, const std::string& value) {
    char* copy = slurm_xstrdup(value.c_str());
    if (*field) slurm_xfree(reinterpret_cast<void**>(field));
    *field = copy;
}

void apply(job_desc_msg_t* desc, const steer::Decision& d) {
    if (d.req_switch) {
        desc->req_switch = d.req_switch;
        desc->wait4switch = d.wait4switch_s;
    }
    if (!d.features.empty()) replace(&desc->features, d.features);
    if (!d.exc_nodes.empty()) replace(&desc->exc_nodes, d.exc_nodes);
    // AdminComment: users cannot change it, so it keeps saying why the job
    // landed where it did. An existing one is kept in front.
    std::string comment = given(desc->admin_comment) ? std::string(desc->admin_comment) + "; " + d.tag : d.tag;
    replace(&desc->admin_comment, comment);
}

int submit(job_desc_msg_t* desc, uint32_t submit_uid) {
    PluginState& st = *g_state;
    std::lock_guard<std::mutex> lock(st.mu);
    if (!st.config_ok) {
        fail_open(st, "config", st.config_error);
        return SLURM_SUCCESS;
    }
    steer::JobRequest req;
    req.min_nodes = (desc->min_nodes == NO_VAL) ? 0 : desc->min_nodes;
    req.user_switches = desc->req_switch != NO_VAL && desc->req_switch != 0;
    req.user_features = given(desc->features);
    req.user_prefer = given(desc->prefer);
    req.user_nodelist = given(desc->req_nodes);
    req.user_exclude = given(desc->exc_nodes);
    if (given(desc->partition)) req.partition = desc->partition;
    // Cheap checks first: most jobs never need the summary.
    steer::Decision d = steer::decide(req, nullptr, st.settings, 0);
    if (!d.fail_open) {
        slurm_debug("%s: uid %u job %s left alone: %s", plugin_type, submit_uid,
                    given(desc->name) ? desc->name : "?", d.why.c_str());
        return SLURM_SUCCESS;
    }
    std::string err;
    std::shared_ptr<const state::Summary> summary = st.reader->get(&err);
    d = steer::decide(req, summary.get(), st.settings, now_s());
    if (d.fail_open) {
        // Without a summary the reader's error (missing, unreadable, which
        // line and key is bad) is the kind: a new error is logged again.
        if (summary)
            fail_open(st, d.fail_kind, d.why + " in " + st.reader->path());
        else
            fail_open(st, err, err);
        return SLURM_SUCCESS;
    }
    if (!st.last_fail_open.empty()) {
        slurm_info("%s: leaf summary %s usable again", plugin_type, st.reader->path().c_str());
        st.last_fail_open.clear();
    }
    if (!d.steered) {
        slurm_debug("%s: uid %u job %s left alone: %s", plugin_type, submit_uid,
                    given(desc->name) ? desc->name : "?", d.why.c_str());
        return SLURM_SUCCESS;
    }
    apply(desc, d);
    slurm_info("%s: uid %u %u-node job %s steered: %s", plugin_type, submit_uid, req.min_nodes,
               given(desc->name) ? desc->name : "?", d.why.c_str());
    return SLURM_SUCCESS;
}

}  // namespace

extern "C" {

int init(void) {
    try {
        g_state = new PluginState;
        const std::string path = default_harmonics_conf_path();
        try {
            HarmonicsConfig cfg = parse_harmonics_conf(path);
            g_state->settings.steering = cfg.steering;
            g_state->settings.switch_wait_s = cfg.switch_wait_s;
            g_state->settings.state_max_age_s = cfg.state_max_age_s;
            g_state->reader = std::make_unique<state::SummaryReader>(cfg.state_file);
            g_state->config_ok = true;
            slurm_info("%s: %s loaded (StateFile=%s SwitchWait=%.0fs StateMaxAge=%.0fs Steering=%s)", plugin_type,
                       path.c_str(), cfg.state_file.c_str(), cfg.switch_wait_s, cfg.state_max_age_s,
                       cfg.steering ? "yes" : "no");
        } catch (const std::exception& e) {
            g_state->config_error = e.what();
            fail_open(*g_state, "config", g_state->config_error);
        }
    } catch (...) {
        // Out of memory at load: run without steering rather than stop slurmctld.
        slurm_error("%s: init failed; jobs pass unchanged (fail open)", plugin_type);
    }
    return SLURM_SUCCESS;
}

int fini(void) {
    delete g_state;
    g_state = nullptr;
    return SLURM_SUCCESS;
}

int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
    (void)err_msg;
    if (!g_state || !job_desc) return SLURM_SUCCESS;
    try {
        return submit(job_desc, submit_uid);
    } catch (const std::exception& e) {
        slurm_error("%s: %s; job passes unchanged (fail open)", plugin_type, e.what());
    } catch (...) {
        slurm_error("%s: unexpected error; job passes unchanged (fail open)", plugin_type);
    }
    return SLURM_SUCCESS;
}

// Changes to pending jobs are the user's or admin's own: no steering.
int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid) {
    (void)job_desc;
    (void)job_ptr;
    (void)submit_uid;
    return SLURM_SUCCESS;
}

}  // extern "C"
