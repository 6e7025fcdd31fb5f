// Table, JSON and CSV output of a comparison.
#include "sim/report.h"

#include <cmath>
#include <memory>

#include "policy/release.h"

namespace harmonics {
namespace sim {

namespace {

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// JSON has no NaN or infinity.
double finite(double x) { return std::isfinite(x) ? x : 0.0; }

void print_row(std::FILE* out, const std::string& name, const Summary& s) {
    std::fprintf(out, "%-12s %10.3f %10.3f %12.1f %11.1f %16.3f\n", name.c_str(), s.mean_slowdown, s.p99_slowdown,
                 s.mean_comm_ms, s.mean_jct_s, s.sched_ms_per_epoch);
}

void json_summary(std::FILE* f, const Summary& s, const std::vector<std::pair<std::string, double>>& solver = {}) {
    std::fprintf(f,
                 "{\"mean_slowdown\": %.6f, \"p99_slowdown\": %.6f, \"mean_comm_ms\": %.6f, "
                 "\"mean_jct_s\": %.6f, \"sched_ms_per_epoch\": %.6f, \"jobs\": %d",
                 finite(s.mean_slowdown), finite(s.p99_slowdown), finite(s.mean_comm_ms), finite(s.mean_jct_s),
                 finite(s.sched_ms_per_epoch), s.jobs);
    if (!solver.empty()) {
        std::fprintf(f, ", \"solver\": {");
        for (std::size_t k = 0; k < solver.size(); ++k)
            std::fprintf(f, "%s\"%s\": %.6g", k ? ", " : "", solver[k].first.c_str(), finite(solver[k].second));
        std::fprintf(f, "}");
    }
    std::fprintf(f, "}");
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        out += c;
    }
    return out + "\"";
}

}  // namespace

void print_table(std::FILE* out, const std::string& title, const std::vector<PolicyRun>& runs,
                 const LowerBound& lb) {
    std::fprintf(out, "%s\n", title.c_str());
    std::fprintf(out, "%-12s %10s %10s %12s %11s %16s\n", "policy", "slowdown", "p99", "comm ms/it", "JCT s",
                 "sched ms/epoch");
    for (const PolicyRun& r : runs) print_row(out, r.run.policy, r.summary);
    print_row(out, "lower-bound", lb.summary);
    // Below the table: a figure for optimal read without these (a solve
    // stopped at its time limit) is not the optimum.
    for (const PolicyRun& r : runs) {
        if (r.solver.empty()) continue;
        std::fprintf(out, "%s solver:", r.run.policy.c_str());
        for (const auto& [k, v] : r.solver) std::fprintf(out, " %s=%g", k.c_str(), v);
        std::fprintf(out, "\n");
    }
}

bool write_json(const std::string& path, const std::string& scenario, unsigned seed,
                const std::vector<PolicyRun>& runs, const LowerBound& lb) {
    File f(std::fopen(path.c_str(), "w"));
    if (!f) return false;
    std::fprintf(f.get(), "{\n  \"scenario\": %s,\n  \"seed\": %u,\n  \"lower_bound\": ", json_string(scenario).c_str(),
                 seed);
    json_summary(f.get(), lb.summary);
    std::fprintf(f.get(), ",\n  \"policies\": {");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::fprintf(f.get(), "%s\n    %s: ", i ? "," : "", json_string(runs[i].run.policy).c_str());
        json_summary(f.get(), runs[i].summary, runs[i].solver);
    }
    std::fprintf(f.get(), "\n  }\n}\n");
    return std::ferror(f.get()) == 0;
}

bool write_jobs_csv(const std::string& path, const std::vector<PolicyRun>& runs, const LowerBound& lb) {
    File f(std::fopen(path.c_str(), "w"));
    if (!f) return false;
    std::fprintf(f.get(),
                 "policy,job,model,nodes,leaves,arrival_s,finish_s,iterations,iterations_done,isolated_ms,"
                 "mean_iteration_ms,slowdown,comm_ms_per_iteration,jct_s,lower_bound_slowdown,steady_iteration_ms,"
                 "steady_comm_ms_per_iteration\n");
    // A sum over n iterations as milliseconds per iteration (0 for none).
    auto per_iteration_ms = [](double sum_s, long n) { return n > 0 ? 1e3 * sum_s / static_cast<double>(n) : 0.0; };
    for (const PolicyRun& r : runs) {
        for (std::size_t j = 0; j < r.run.jobs.size(); ++j) {
            const JobResult& x = r.run.jobs[j];
            std::fprintf(f.get(), "%s,%lld,%s,%d,%d,%.6f,%.6f,%ld,%ld,%.4f,%.4f,%.6f,%.4f,%.3f,%.6f,%.4f,%.4f\n",
                         r.run.policy.c_str(), static_cast<long long>(x.id), x.model.c_str(), x.nodes, x.leaves,
                         x.arrival_s, x.finish_s, x.iterations, x.iterations_done, 1e3 * x.isolated_s,
                         per_iteration_ms(x.iteration_time_s, x.iterations_done), x.mean_slowdown(),
                         per_iteration_ms(x.comm_time_s, x.iterations_done), x.jct_s(r.run.end_s),
                         j < lb.slowdown.size() ? lb.slowdown[j] : 0.0,
                         per_iteration_ms(x.steady_iteration_time_s, x.steady_iterations_done),
                         per_iteration_ms(x.steady_comm_time_s, x.steady_iterations_done));
        }
    }
    return std::ferror(f.get()) == 0;
}

bool write_decisions_csv(const std::string& path, const Topology& topo, const std::vector<PolicyRun>& runs) {
    File f(std::fopen(path.c_str(), "w"));
    if (!f) return false;
    std::fprintf(f.get(), "policy,time_s,job,gated,period_ms,phase_ms,late_ms,window,windows,owner,measured_period_ms\n");
    for (const PolicyRun& r : runs) {
        for (const DecisionChange& c : r.run.decisions) {
            const JobDecision& d = c.decision;
            const double phase = d.gated && d.period_s > 0 ? gate_phase_s(d) : 0;
            std::string owner = "-";
            if (d.group >= 0 && d.gated) owner = "coordinator";
            else if (d.owner_leaf >= 0 && static_cast<size_t>(d.owner_leaf) < topo.switches().size())
                owner = topo.sw(d.owner_leaf).name;
            std::fprintf(f.get(), "%s,%.6f,%lld,%d,%.4f,%.4f,%.4f,%d,%d,%s,%.4f\n", r.run.policy.c_str(), c.t_s,
                         static_cast<long long>(c.job), d.gated ? 1 : 0, 1e3 * d.period_s, 1e3 * phase,
                         d.late_s < 0 ? -1.0 : 1e3 * d.late_s, d.group, d.groups, owner.c_str(),
                         1e3 * c.measured_period_s);
        }
    }
    return std::ferror(f.get()) == 0;
}

}  // namespace sim
}  // namespace harmonics
