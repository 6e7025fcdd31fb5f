// Data files and the gnuplot script for the timeline and CDF plots.
#include "sim/plots.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace harmonics {
namespace sim {

LinkId busiest_uplink(const Topology& topo, const RunResult& run) {
    LinkId best = -1;
    for (LinkId l = 0; l < static_cast<LinkId>(run.link_bytes.size()); ++l)
        if (topo.link(l).kind == LinkKind::SwitchUp && run.link_bytes[l] > 0 &&
            (best < 0 || run.link_bytes[l] > run.link_bytes[best]))
            best = l;
    return best;
}

std::string find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return "";
    std::stringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':')) {
        if (d.empty()) continue;
        std::string full = d + "/" + name;
        if (access(full.c_str(), X_OK) == 0) return full;
    }
    return "";
}

namespace {

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Policy names are registry names; keep file names plain anyway.
std::string file_safe(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out;
}

bool write_timeline(const std::string& path, const RunResult& run, LinkId link, std::map<JobId, int>& rows) {
    std::ofstream f(path);
    f << "# row t0_s t1_s job load_Gbps (flows of each job on the uplink)\n";
    for (const TraceSegment& s : run.trace) {
        if (s.link != link) continue;
        auto it = rows.emplace(s.job, static_cast<int>(rows.size()) + 1).first;
        f << it->second << ' ' << s.t0 << ' ' << s.t1 << ' ' << s.job << ' ' << s.rate_Bps * 8e-9 << '\n';
    }
    return static_cast<bool>(f);
}

bool write_cdf(const std::string& path, std::vector<double> slowdown) {
    std::ofstream f(path);
    std::sort(slowdown.begin(), slowdown.end());
    f << "# slowdown fraction_of_jobs\n";
    for (std::size_t i = 0; i < slowdown.size(); ++i)
        f << slowdown[i] << ' ' << static_cast<double>(i + 1) / static_cast<double>(slowdown.size()) << '\n';
    return static_cast<bool>(f);
}

}  // namespace

std::string write_plots(const std::string& dir, const Topology& topo, const std::vector<PolicyRun>& runs,
                        const LowerBound& lb, bool* ok) {
    *ok = true;
    if (runs.empty()) return "no runs to plot";
    LinkId link = busiest_uplink(topo, runs.front().run);
    std::ofstream gp(dir + "/plots.gp");
    gp << "# Made by harmonics-sim; run `gnuplot plots.gp` in this folder.\n"
       << "set terminal pngcairo size 1100,520 noenhanced\n";
    std::map<JobId, int> rows;  // the same row for a job in every policy's plot
    for (const PolicyRun& r : runs) {
        std::string name = file_safe(r.run.policy);
        if (link >= 0 && !write_timeline(dir + "/timeline-" + name + ".dat", r.run, link, rows)) *ok = false;
        std::vector<double> slow;
        for (const JobResult& j : r.run.jobs)
            if (j.iterations_done > 0) slow.push_back(j.mean_slowdown());
        if (!write_cdf(dir + "/cdf-" + name + ".dat", slow)) *ok = false;
    }
    if (!write_cdf(dir + "/cdf-lower-bound.dat", lb.slowdown)) *ok = false;
    if (link >= 0) {
        for (const PolicyRun& r : runs) {
            std::string name = file_safe(r.run.policy);
            gp << "set output 'timeline-" << name << ".png'\n"
               << "set title 'Collectives on " << topo.link(link).name << " (" << r.run.policy
               << "): overlapping bars collide, bars taking turns interleave'\n"
               << "set xlabel 'time (s)'\nunset ylabel\nunset key\nset grid xtics\n"
               << "set yrange [0:" << rows.size() + 1 << "]\n"
               << "plot 'timeline-" << name << ".dat' using 2:1:($3-$2):(0):4:ytic(sprintf('job %d', $4)) with vectors nohead lw 10 lc variable\n";
        }
    }
    gp << "set output 'cdf-slowdown.png'\nset title 'CDF of iteration slowdown over isolated, per job'\n"
       << "set xlabel 'slowdown (mean iteration time / isolated)'\nset ylabel 'fraction of jobs'\n"
       << "set key bottom right\nset yrange [0:1.05]\nset autoscale x\nset ytics auto\nplot ";
    for (const PolicyRun& r : runs)
        gp << "'cdf-" << file_safe(r.run.policy) << ".dat' using 1:2 with steps lw 2 title '" << r.run.policy
           << "', ";
    gp << "'cdf-lower-bound.dat' using 1:2 with steps lw 2 dt 2 title 'lower bound'\n";
    gp.close();
    if (!gp) *ok = false;

    std::string note = link >= 0 ? "timeline of " + topo.link(link).name + ", " : "no uplink carried traffic, ";
    std::string gnuplot = find_on_path("gnuplot");
    if (gnuplot.empty())
        return note + "gnuplot not found: data and plots.gp written to " + dir + " (install gnuplot-nox for PNGs)";
    std::string cmd = "cd " + shell_quote(dir) + " && " + shell_quote(gnuplot) + " plots.gp";
    if (std::system(cmd.c_str()) != 0) return note + "gnuplot failed; data and plots.gp are in " + dir;
    return note + "PNG plots written to " + dir;
}

}  // namespace sim
}  // namespace harmonics
