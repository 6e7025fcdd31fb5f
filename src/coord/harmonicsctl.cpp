// harmonicsctl: asks harmonics-coordd about leaves, jobs and schedules and
// prints scontrol-style Key=Value lines (or JSON with --json).
#include <getopt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "config.h"
#include "config/harmonics_conf.h"
#include "wire/client.h"

namespace {

using harmonics::wire::Client;
using harmonics::wire::EnvelopePtr;

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: harmonicsctl [-f harmonics.conf] [--socket PATH | --address HOST:PORT] [--json]\n"
                 "                    show leaves | show jobs | show job ID | show schedule | ping\n");
}

std::string ms(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3fms", s * 1e3);
    return b;
}

std::string jstr(const char* s) {
    std::string o = "\"";
    for (const char* p = s ? s : ""; *p; ++p) {
        if (*p == '"' || *p == '\\') o += '\\';
        if (static_cast<unsigned char>(*p) < 0x20) continue;
        o += *p;
    }
    return o + "\"";
}

std::string leaves_of(const Harmonics__JobInfo& j, const char* sep) {
    std::string s;
    for (std::size_t i = 0; i < j.n_leaves; ++i) s += (i ? sep : "") + std::string(j.leaves[i]);
    return s;
}

// Slurm's end time for the job (start plus time limit) as scontrol prints
// times, local; empty when not known.
std::string end_time_text(const Harmonics__JobInfo& j) {
    if (!j.has_end_time_s || j.end_time_s <= 0) return "";
    const std::time_t t = static_cast<std::time_t>(j.end_time_s);
    struct tm tm;
    char buf[32];
    if (!localtime_r(&t, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0) return "";
    return buf;
}

// Seconds its deciding leaf still runs it free for having outrun its period.
double outran_for_s(const Harmonics__JobInfo& j) { return j.has_outran_for_s ? j.outran_for_s : 0; }

void print_job(const Harmonics__JobInfo& j, bool json, bool schedule_only) {
    const Harmonics__Schedule* d = j.decision;
    if (json) {
        std::printf("{\"job_id\":%lld,\"user_id\":%s,\"state\":%s,\"node_list\":%s,\"leaves\":[",
                    (long long)j.job_id, j.has_uid ? std::to_string(j.uid).c_str() : "null", jstr(j.state).c_str(),
                    jstr(j.node_list).c_str());
        for (std::size_t i = 0; i < j.n_leaves; ++i) std::printf("%s%s", i ? "," : "", jstr(j.leaves[i]).c_str());
        std::printf("],\"owner_leaf\":%s,\"adopted\":%s,\"run_free\":%s,\"handed_over\":%s,\"holds\":%s,"
                    "\"outran_for_s\":%.1f",
                    jstr(j.owner_leaf).c_str(), j.has_adopted && j.adopted ? "true" : "false",
                    j.has_run_free && j.run_free ? "true" : "false",
                    j.has_handed_over && j.handed_over ? "true" : "false", j.has_holds && !j.holds ? "false" : "true",
                    outran_for_s(j));
        if (d)
            std::printf(",\"gated\":%s,\"period_s\":%.6f,\"shift_s\":%.6f,\"origin_s\":%.6f,\"epoch\":%llu",
                        d->gated ? "true" : "false", d->period_s, d->shift_s, d->origin_s, (unsigned long long)d->epoch);
        if (d && d->has_group && d->has_groups) std::printf(",\"window\":%d,\"windows\":%d", d->group, d->groups);
        if (j.has_end_time_s && j.end_time_s > 0) std::printf(",\"end_time_s\":%.0f", j.end_time_s);
        std::printf("}");
        return;
    }
    if (schedule_only) {
        std::printf("JobId=%lld Owner=%s Gated=%s Period=%s Shift=%s Origin=%.6f Epoch=%llu\n", (long long)j.job_id,
                    j.owner_leaf && *j.owner_leaf ? j.owner_leaf : "(local)", d && d->gated ? "yes" : "no",
                    ms(d ? d->period_s : 0).c_str(), ms(d ? d->shift_s : 0).c_str(), d ? d->origin_s : 0,
                    (unsigned long long)(d ? d->epoch : 0));
        return;
    }
    // EndTime: Slurm's (start plus time limit), what the schedd weighs a
    // new gate's first wait against; absent for a job without a limit.
    const std::string end = end_time_text(j);
    std::printf("JobId=%lld UserId=%s State=%s%s%s\n", (long long)j.job_id,
                j.has_uid ? std::to_string(j.uid).c_str() : "?", j.state ? j.state : "?", end.empty() ? "" : " EndTime=",
                end.c_str());
    // HandedOver/Adopted, RunFree, Holds=no and Outran only when set: why
    // the owner is not the one first assigned, and why a job is not gated.
    const bool adopted = j.has_adopted && j.adopted;
    const std::string outran =
        outran_for_s(j) > 0 ? " Outran=yes FreeFor=" + std::to_string(int(outran_for_s(j) + 0.5)) + "s" : "";
    std::printf("   NodeList=%s Leaves=%s Owner=%s%s%s%s%s\n", j.node_list && *j.node_list ? j.node_list : "(null)",
                leaves_of(j, ",").c_str(), j.owner_leaf && *j.owner_leaf ? j.owner_leaf : "(none)",
                adopted                              ? " Adopted=yes"
                : j.has_handed_over && j.handed_over ? " HandedOver=yes"
                                                     : "",
                j.has_run_free && j.run_free ? " RunFree=yes" : "", j.has_holds && !j.holds ? " Holds=no" : "",
                outran.c_str());
    // Window=G/K: a phase family's member, placed by coordd in window G of
    // the K its period holds.
    const std::string window = d && d->has_group && d->has_groups
                                   ? " Window=" + std::to_string(d->group) + "/" + std::to_string(d->groups)
                                   : "";
    // Gated=locked: a job that does not hold, planned where it will lock.
    const char* gated = d && d->gated ? (j.has_holds && !j.holds ? "locked" : "yes") : "no";
    if (d)
        std::printf("   Gated=%s Period=%s Shift=%s%s Epoch=%llu\n", gated, ms(d->period_s).c_str(),
                    ms(d->shift_s).c_str(), window.c_str(), (unsigned long long)d->epoch);
    std::printf("\n");
}

void print_reply(const Harmonics__CtlReply& r, bool json, double rtt_s) {
    if (r.kind == HARMONICS__QUERY_KIND__QUERY_PING) {
        if (json)
            std::printf("{\"status\":\"up\",\"version\":%s,\"uptime_s\":%.3f,\"round_trip_s\":%.6f}\n",
                        jstr(r.version).c_str(), r.uptime_s, rtt_s);
        else
            std::printf("Status=up Version=%s Uptime=%.1fs RoundTrip=%s\n", r.version ? r.version : "?", r.uptime_s,
                        ms(rtt_s).c_str());
        return;
    }
    if (r.kind == HARMONICS__QUERY_KIND__QUERY_LEAVES) {
        if (json) std::printf("[");
        for (std::size_t i = 0; i < r.n_leaves; ++i) {
            const Harmonics__LeafStatus& l = *r.leaves[i];
            if (json)
                std::printf("%s{\"leaf\":%s,\"connected\":%s,\"listen\":%s,\"epoch\":%llu,\"jobs\":%d,"
                            "\"cross_leaf_jobs\":%d,\"predicted_cost\":%.6f,\"decide_s\":%.6f}",
                            i ? "," : "", jstr(l.leaf).c_str(), l.connected ? "true" : "false", jstr(l.listen).c_str(),
                            (unsigned long long)l.epoch, l.jobs, l.cross_leaf_jobs, l.predicted_cost, l.decide_wall_s);
            else
                std::printf("LeafName=%s Connected=%s Schedd=%s Epoch=%llu Jobs=%d CrossLeafJobs=%d "
                            "PredictedCost=%.4f DecideTime=%s LastSeen=%s\n",
                            l.leaf, l.connected ? "yes" : "no", l.listen && *l.listen ? l.listen : "(null)",
                            (unsigned long long)l.epoch, l.jobs, l.cross_leaf_jobs, l.predicted_cost,
                            ms(l.decide_wall_s).c_str(), l.has_last_seen_s ? (std::to_string(int(l.last_seen_s)) + "s").c_str() : "never");
        }
        if (json) std::printf("]\n");
        return;
    }
    bool sched = r.kind == HARMONICS__QUERY_KIND__QUERY_SCHEDULE;
    if (json) std::printf("[");
    for (std::size_t i = 0; i < r.n_jobs; ++i) {
        if (json && i) std::printf(",");
        print_job(*r.jobs[i], json, sched);
    }
    if (json) std::printf("]\n");
    if (!json && r.n_jobs == 0) std::printf("No jobs.\n");
}

}  // namespace

int main(int argc, char** argv) {
    std::string conf = harmonics::default_harmonics_conf_path();
    std::string socket, address;
    bool json = false;
    const option longopts[] = {{"config", required_argument, nullptr, 'f'}, {"socket", required_argument, nullptr, 's'},
                               {"address", required_argument, nullptr, 'a'}, {"json", no_argument, nullptr, 'j'},
                               {"help", no_argument, nullptr, 'h'},         {"version", no_argument, nullptr, 'V'},
                               {nullptr, 0, nullptr, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "f:s:a:jhV", longopts, nullptr)) != -1) {
        switch (ch) {
        case 'f': conf = optarg; break;
        case 's': socket = optarg; break;
        case 'a': address = optarg; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': std::printf("harmonicsctl %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    std::vector<std::string> args(argv + optind, argv + argc);
    Harmonics__CtlQuery q = HARMONICS__CTL_QUERY__INIT;
    if (args.size() == 1 && args[0] == "ping") {
        q.kind = HARMONICS__QUERY_KIND__QUERY_PING;
    } else if (args.size() == 2 && args[0] == "show" && args[1] == "leaves") {
        q.kind = HARMONICS__QUERY_KIND__QUERY_LEAVES;
    } else if (args.size() == 2 && args[0] == "show" && args[1] == "jobs") {
        q.kind = HARMONICS__QUERY_KIND__QUERY_JOBS;
    } else if (args.size() == 2 && args[0] == "show" && args[1] == "schedule") {
        q.kind = HARMONICS__QUERY_KIND__QUERY_SCHEDULE;
    } else if (args.size() == 3 && args[0] == "show" && args[1] == "job") {
        char* end = nullptr;
        q.kind = HARMONICS__QUERY_KIND__QUERY_JOB;
        q.has_job_id = 1;
        q.job_id = std::strtoll(args[2].c_str(), &end, 10);
        if (*end) {
            std::fprintf(stderr, "harmonicsctl: bad job id '%s'\n", args[2].c_str());
            return 2;
        }
    } else {
        usage(stderr);
        return 2;
    }
    std::string munge_socket;
    double timeout_s = 2;
    if (socket.empty() && address.empty()) {
        try {
            harmonics::HarmonicsConfig cfg = harmonics::parse_harmonics_conf(conf);
            socket = cfg.coord_socket;
            munge_socket = cfg.munge_socket;
            timeout_s = cfg.connect_timeout_s;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "harmonicsctl: %s\n", e.what());
            return 1;
        }
    } else if (!address.empty()) {
        try {
            munge_socket = harmonics::parse_harmonics_conf(conf).munge_socket;
        } catch (const std::exception&) {
            // Without a config, libmunge's default socket.
        }
    }
    if (const char* ms_env = std::getenv("HARMONICS_MUNGE_SOCKET")) munge_socket = ms_env;
    std::string target = address.empty() ? socket : address;
    int tmo = int(timeout_s * 1000);
    Client c;
    std::string err;
    auto t0 = std::chrono::steady_clock::now();
    if (!c.connect(target, tmo, &err) || !c.handshake(HARMONICS__ROLE__ROLE_CTL, "harmonicsctl", munge_socket, tmo, &err)) {
        std::fprintf(stderr, "harmonicsctl: coordd at %s: %s\n", target.c_str(), err.c_str());
        return 1;
    }
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_CTL_QUERY;
    env.ctl_query = &q;
    EnvelopePtr reply;
    if (!c.send(env, tmo, &err) || !c.recv(&reply, tmo, &err)) {
        std::fprintf(stderr, "harmonicsctl: coordd at %s: %s\n", target.c_str(), err.c_str());
        return 1;
    }
    double rtt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (reply->body_case != HARMONICS__ENVELOPE__BODY_CTL_REPLY) {
        std::fprintf(stderr, "harmonicsctl: unexpected answer from coordd\n");
        return 1;
    }
    if (reply->ctl_reply->error) {
        std::fprintf(stderr, "harmonicsctl: %s\n", reply->ctl_reply->error);
        return 1;
    }
    print_reply(*reply->ctl_reply, json, rtt);
    return 0;
}
