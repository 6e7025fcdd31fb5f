// harmonics-schedd: command line, logging, then the Schedd loop.
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "config.h"
#include "schedd.h"
#include "util/log.h"

namespace {

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: harmonics-schedd [-f harmonics.conf] [--leaf NAME] [--listen HOST:PORT]\n"
                 "                        [--coord HOST:PORT|none] [--idle-timeout SECONDS] [--log FILE|syslog]\n"
                 "                        [-v] [--version]\n"
                 "Runs the Local Scheduler of one leaf switch. See harmonics-schedd(8).\n");
}

}  // namespace

int main(int argc, char** argv) {
    harmonics::sched::ScheddOptions opts;
    opts.config_path = harmonics::default_harmonics_conf_path();
    std::string log_dest;
    bool verbose = false;
    const option longopts[] = {
        {"config", required_argument, nullptr, 'f'}, {"leaf", required_argument, nullptr, 'l'},
        {"listen", required_argument, nullptr, 'L'}, {"coord", required_argument, nullptr, 'c'},
        {"log", required_argument, nullptr, 'o'},    {"verbose", no_argument, nullptr, 'v'},
        {"idle-timeout", required_argument, nullptr, 'i'},
        {"help", no_argument, nullptr, 'h'},         {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "f:l:L:c:o:vhV", longopts, nullptr)) != -1) {
        switch (ch) {
        case 'f': opts.config_path = optarg; break;
        case 'l': opts.leaf = optarg; break;
        case 'L': opts.listen = optarg; break;
        case 'c': opts.coord = optarg; break;
        case 'o': log_dest = optarg; break;
        case 'v': verbose = true; break;
        case 'i': opts.idle_timeout_s = std::atof(optarg); break;
        case 'h': usage(stdout); return 0;
        case 'V': std::printf("harmonics-schedd %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    harmonics::log_open("harmonics-schedd", log_dest, verbose ? harmonics::LogLevel::Debug : harmonics::LogLevel::Info);
    try {
        harmonics::sched::Schedd d(opts);
        std::string err;
        if (!d.start(&err)) {
            HLOG_ERROR("%s", err.c_str());
            std::fprintf(stderr, "harmonics-schedd: %s\n", err.c_str());
            return 1;
        }
        if (verbose) harmonics::log_set_level(harmonics::LogLevel::Debug);
        return d.run();
    } catch (const std::exception& e) {
        HLOG_ERROR("fatal: %s", e.what());
        std::fprintf(stderr, "harmonics-schedd: %s\n", e.what());
        return 1;
    }
}
