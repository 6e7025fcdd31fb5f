// Parsing of the workload CSV; every error names the file, the line and the field.
#include "sim/workload.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "model/model_library.h"
#include "topology/hostlist.h"

namespace harmonics {
namespace sim {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    std::size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

struct LineContext {
    const std::string& file;
    int line;
    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw WorkloadError(file + ":" + std::to_string(line) + ": " + field + ": " + what);
    }
};

long parse_long(const LineContext& at, const std::string& field, const std::string& v, long min) {
    errno = 0;
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < min)
        at.fail(field, "'" + v + "' is not an integer >= " + std::to_string(min));
    return x;
}

double parse_time(const LineContext& at, const std::string& field, const std::string& v) {
    errno = 0;
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || errno != 0 || !std::isfinite(x) || x < 0)
        at.fail(field, "'" + v + "' is not a time in seconds >= 0");
    return x;
}

bool is_number(const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && *end == '\0';
}

std::vector<NodeId> parse_placement(const LineContext& at, const std::string& v, const Topology& topo) {
    std::vector<std::string> names;
    try {
        names = expand_hostlist(v);
    } catch (const HostlistError& e) {
        at.fail("placement", e.what());
    }
    std::vector<NodeId> out;
    std::set<NodeId> seen;
    for (const std::string& n : names) {
        NodeId id = topo.find_node(n);
        if (id < 0) at.fail("placement", "unknown node '" + n + "'");
        if (!seen.insert(id).second) at.fail("placement", "node '" + n + "' given twice");
        out.push_back(id);
    }
    return out;
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    int depth = 0;
    for (char c : line) {
        if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted && depth == 0) {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            if (!quoted && c == '[') ++depth;
            if (!quoted && c == ']' && depth > 0) --depth;
            cur += c;
        }
    }
    out.push_back(trim(cur));
    return out;
}

std::vector<JobSpec> parse_workload_text(const std::string& text, const std::string& filename,
                                         const Topology& topo) {
    std::vector<JobSpec> jobs;
    std::set<JobId> ids;
    std::istringstream in(text);
    std::string raw;
    int lineno = 0;
    bool first_data = true;
    while (std::getline(in, raw)) {
        ++lineno;
        std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f = split_csv_line(line);
        LineContext at{filename, lineno};
        if (first_data && !is_number(f[0])) {  // a header
            first_data = false;
            continue;
        }
        first_data = false;
        if (f.size() < 6 || f.size() > 7)
            at.fail("line", "expected 6 or 7 fields (id, arrival_s, model, nodes, gpus_per_node, iterations"
                            " [, placement]), found " + std::to_string(f.size()));
        JobSpec s;
        s.id = parse_long(at, "id", f[0], 0);
        if (!ids.insert(s.id).second) at.fail("id", "job " + f[0] + " is defined twice");
        s.arrival_s = parse_time(at, "arrival_s", f[1]);
        s.model = f[2];
        if (!find_model(s.model)) at.fail("model", "unknown model '" + s.model + "'");
        s.nodes = static_cast<int>(parse_long(at, "nodes", f[3], 1));
        if (s.nodes > static_cast<long>(topo.nodes().size()))
            at.fail("nodes", f[3] + " nodes asked, the cluster has " + std::to_string(topo.nodes().size()));
        s.gpus_per_node = static_cast<int>(parse_long(at, "gpus_per_node", f[4], 1));
        s.iterations = parse_long(at, "iterations", f[5], 1);
        if (f.size() == 7 && !f[6].empty()) {
            s.placement = parse_placement(at, f[6], topo);
            if (static_cast<int>(s.placement.size()) != s.nodes)
                at.fail("placement", "names " + std::to_string(s.placement.size()) + " nodes, the job has " +
                                         std::to_string(s.nodes));
        }
        jobs.push_back(std::move(s));
    }
    if (jobs.empty()) throw WorkloadError(filename + ": no jobs");
    return jobs;
}

std::vector<JobSpec> parse_workload_csv(const std::string& path, const Topology& topo) {
    std::ifstream in(path);
    if (!in) throw WorkloadError(path + ":0: cannot open the workload file");
    std::stringstream buf;
    buf << in.rdbuf();
    return parse_workload_text(buf.str(), path, topo);
}

}  // namespace sim
}  // namespace harmonics
