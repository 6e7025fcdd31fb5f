// harmonics-coordd: command line, logging, then the Coordd loop.
#include <getopt.h>

#include <cstdio>
#include <string>

#include "config.h"
#include "coordd.h"
#include "util/log.h"

namespace {

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: harmonics-coordd [-f harmonics.conf] [--listen HOST:PORT|none] [--socket PATH|none]\n"
                 "                        [--state-file PATH|none] [--slurm auto|yes|no] [--slurm-conf PATH]\n"
                 "                        [--log FILE|syslog] [-v] [--version]\n"
                 "Runs the Global Coordinator beside slurmctld. See harmonics-coordd(8).\n");
}

}  // namespace

int main(int argc, char** argv) {
    harmonics::coord::CoordOptions opts;
    opts.config_path = harmonics::default_harmonics_conf_path();
    std::string log_dest;
    bool verbose = false;
    const option longopts[] = {
        {"config", required_argument, nullptr, 'f'},     {"listen", required_argument, nullptr, 'L'},
        {"socket", required_argument, nullptr, 's'},     {"state-file", required_argument, nullptr, 'S'},
        {"slurm", required_argument, nullptr, 'u'},      {"slurm-conf", required_argument, nullptr, 'U'},
        {"log", required_argument, nullptr, 'o'},        {"verbose", no_argument, nullptr, 'v'},
        {"help", no_argument, nullptr, 'h'},             {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "f:L:s:S:o:vhV", longopts, nullptr)) != -1) {
        switch (ch) {
        case 'f': opts.config_path = optarg; break;
        case 'L': opts.listen = optarg; break;
        case 's': opts.socket = optarg; break;
        case 'S': opts.state_file = optarg; break;
        case 'u': opts.slurm = optarg; break;
        case 'U': opts.slurm_conf = optarg; break;
        case 'o': log_dest = optarg; break;
        case 'v': verbose = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': std::printf("harmonics-coordd %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || (opts.slurm != "auto" && opts.slurm != "yes" && opts.slurm != "no")) {
        usage(stderr);
        return 2;
    }
    harmonics::log_open("harmonics-coordd", log_dest, verbose ? harmonics::LogLevel::Debug : harmonics::LogLevel::Info);
    try {
        harmonics::coord::Coordd d(opts);
        std::string err;
        if (!d.start(&err)) {
            HLOG_ERROR("%s", err.c_str());
            std::fprintf(stderr, "harmonics-coordd: %s\n", err.c_str());
            return 1;
        }
        if (verbose) harmonics::log_set_level(harmonics::LogLevel::Debug);
        return d.run();
    } catch (const std::exception& e) {
        HLOG_ERROR("fatal: %s", e.what());
        std::fprintf(stderr, "harmonics-coordd: %s\n", e.what());
        return 1;
    }
}
