#include "config/harmonics_conf.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "config/kv_lines.h"
#include "config/units.h"
#include "topology/hostlist.h"
#include "topology/topology_conf.h"

namespace harmonics {
namespace {

// Each setter returns "" when the value was taken, otherwise the problem.
using Setter = std::string (*)(HarmonicsConfig&, const std::string&);

struct KeySpec {
    const char* name;  // canonical spelling, as documented
    Setter set;
};

std::string bad(const char* what, const std::string& v, const char* hint) {
    return std::string("bad ") + what + " '" + v + "' (" + hint + ")";
}

const char* const kBandwidthHint = "use e.g. 100Gbps, 25GB/s";
const char* const kDurationHint = "use e.g. 500ms, 2s, 5min, 250us";

std::string set_bandwidth(double* out, const std::string& v) {
    return parse_bandwidth(v, out) ? "" : bad("bandwidth", v, kBandwidthHint);
}

// A fraction in [0, below), as a number or a percentage ("0.02", "2%").
std::string set_fraction(double* out, const std::string& v, double below, const char* hint) {
    double f;
    if (!parse_number(v, &f, true)) return bad("fraction", v, hint);
    if (f < 0 || f >= below) {
        char hi[32];
        std::snprintf(hi, sizeof hi, "%g", below);
        return "fraction '" + v + "' must be in [0, " + hi + ")";
    }
    *out = f;
    return "";
}

std::string set_duration(double* out, const std::string& v, double min_s, bool min_exclusive) {
    double s;
    if (!parse_duration(v, &s)) return bad("duration", v, kDurationHint);
    if (min_exclusive ? s <= min_s : s < min_s)
        return "duration '" + v + "' must be " + (min_exclusive ? "more than " : "at least ") + format_duration(min_s);
    *out = s;
    return "";
}

std::string set_bool(bool* out, const std::string& v) {
    return parse_bool(v, out) ? "" : bad("boolean", v, "use yes/no, true/false, 1/0");
}

std::string set_port(int* out, const std::string& v) {
    long p;
    if (!parse_int(v, 1, 65535, &p)) return bad("port", v, "use a number from 1 to 65535");
    *out = static_cast<int>(p);
    return "";
}

std::string set_address(std::string* out, const std::string& v, bool port_optional) {
    std::string host, why;
    int port;
    bool ok = split_host_port(v, &host, &port, &why);
    if (!ok && port_optional && !v.empty() && v.find(':') == std::string::npos) ok = true;
    if (!ok) {
        const std::string hint = why + "; " + (port_optional ? "use host or host:port" : "use host:port, e.g. ctl1:6829");
        return bad("address", v, hint.c_str());
    }
    *out = v;
    return "";
}

std::string set_path(std::string* out, const std::string& v) {
    if (v.empty()) return "empty path";
    *out = v;
    return "";
}

std::string set_socket_path(std::string* out, const std::string& v) {
    if (v.empty() || v[0] != '/') return "socket path '" + v + "' must be absolute";
    if (v.size() >= 108) return "socket path '" + v + "' is longer than a Unix socket allows (107 bytes)";
    *out = v;
    return "";
}

const KeySpec kGlobalKeys[] = {
    {"TopologyFile", [](HarmonicsConfig& c, const std::string& v) { return set_path(&c.topology_file, v); }},
    {"NodeBandwidth", [](HarmonicsConfig& c, const std::string& v) { return set_bandwidth(&c.node_Bps, v); }},
    {"Oversubscription",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         double r;
         if (!parse_number(v, &r)) return bad("ratio", v, "use a number such as 2 for 2:1");
         if (r < 1) return "ratio '" + v + "' must be at least 1 (1 = non-blocking)";
         c.oversubscription = r;
         return "";
     }},
    {"Policy",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         for (const char* p : {"fair", "harmonics", "cassini", "crux", "optimal"})
             if (lowercase(v) == p) {
                 c.policy = p;
                 return "";
             }
         return bad("policy", v, "use fair, harmonics, cassini, crux or optimal");
     }},
    {"Epoch", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.epoch_s, v, 0, true); }},
    {"Slot", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.slot_s, v, 0, true); }},
    {"ChangeThreshold",
     [](HarmonicsConfig& c, const std::string& v) {
         return set_fraction(&c.change_threshold, v, 1, "use e.g. 0.02 or 2%");
     }},
    {"Guard", [](HarmonicsConfig& c, const std::string& v) { return set_fraction(&c.guard, v, 0.5, "use e.g. 0.01 or 1%"); }},
    {"LocalBudget", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.local_budget_s, v, 0, true); }},
    {"MaxStretch",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         double m;
         if (!parse_number(v, &m)) return bad("stretch", v, "use e.g. 1.05");
         if (m < 1 || m > 2) return "stretch '" + v + "' must be between 1 (never stretch) and 2";
         c.max_stretch = m;
         return "";
     }},
    {"DriftHorizon", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.drift_horizon_s, v, 0, true); }},
    {"SolverTimeLimit",
     [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.solver_time_limit_s, v, 0, true); }},
    {"Seed",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         long s;
         if (!parse_int(v, 0, 4294967295L, &s)) return bad("seed", v, "use a number from 0 to 4294967295");
         c.seed = static_cast<unsigned>(s);
         return "";
     }},
    {"SchedPort", [](HarmonicsConfig& c, const std::string& v) { return set_port(&c.sched_port, v); }},
    {"CoordAddress", [](HarmonicsConfig& c, const std::string& v) { return set_address(&c.coord_address, v, false); }},
    {"CoordSocket", [](HarmonicsConfig& c, const std::string& v) { return set_socket_path(&c.coord_socket, v); }},
    {"CoordRounds",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         long r;
         if (!parse_int(v, 1, 100, &r)) return bad("number of rounds", v, "use a number from 1 to 100");
         c.coord_rounds = static_cast<int>(r);
         return "";
     }},
    {"AdminCommentInterval",
     [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.admin_comment_interval_s, v, 0, false); }},
    {"StateFile", [](HarmonicsConfig& c, const std::string& v) { return set_path(&c.state_file, v); }},
    {"StateMaxAge", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.state_max_age_s, v, 0, true); }},
    {"SwitchWait", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.switch_wait_s, v, 0, false); }},
    {"PhaseGroups", [](HarmonicsConfig& c, const std::string& v) { return set_bool(&c.phase_groups, v); }},
    {"FreeOutrunning", [](HarmonicsConfig& c, const std::string& v) { return set_bool(&c.free_outrunning, v); }},
    {"ChargeWaits", [](HarmonicsConfig& c, const std::string& v) { return set_bool(&c.charge_waits, v); }},
    {"Steering", [](HarmonicsConfig& c, const std::string& v) { return set_bool(&c.steering, v); }},
    {"Gate", [](HarmonicsConfig& c, const std::string& v) { return set_bool(&c.gate, v); }},
    {"GateCap", [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.gate_cap_s, v, 0, false); }},
    {"ClockTolerance",
     [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.clock_tolerance_s, v, 0, false); }},
    {"ReportInterval",
     [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.report_interval_s, v, 0, true); }},
    {"ConnectTimeout",
     [](HarmonicsConfig& c, const std::string& v) { return set_duration(&c.connect_timeout_s, v, 0, true); }},
    {"SlurmUser",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         if (v.empty()) return "empty user name";
         c.slurm_user = v;
         return "";
     }},
    {"MungeSocket", [](HarmonicsConfig& c, const std::string& v) { return set_socket_path(&c.munge_socket, v); }},
    {"MaxFrameSize",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         std::size_t b;
         if (!parse_size(v, &b)) return bad("size", v, "use e.g. 1MiB, 65536");
         if (b < 1024 || b > (std::size_t{1} << 30)) return "size '" + v + "' must be between 1KiB and 1GiB";
         c.max_frame_bytes = b;
         return "";
     }},
    {"LogFile",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         c.log_file = v;  // "" = stderr
         return "";
     }},
    {"LogLevel",
     [](HarmonicsConfig& c, const std::string& v) -> std::string {
         return parse_log_level(v, &c.log_level) ? "" : bad("log level", v, "use error, warning, info or debug");
     }},
};

const KeySpec* find_key(const std::string& key) {
    std::string k = lowercase(key);
    for (const KeySpec& s : kGlobalKeys)
        if (lowercase(s.name) == k) return &s;
    return nullptr;
}

std::string strip_prefix(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0 ? s.substr(prefix.size()) : s;
}

std::string folder_of(const std::string& path) {
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// Which keys each switch already has, and on which line: a switch may be
// described over several lines (SwitchName=rack[1-16] Uplink=... then
// SwitchName=rack1 Schedd=...), but each key only once.
using SwitchKeyLines = std::map<std::string, std::map<std::string, int>>;

// One `SwitchName=rack[1-2] Uplink=... Downlink=... Schedd=...` line.
void parse_switch_line(const KeyValueLine& l, const std::string& file, HarmonicsConfig* cfg, SwitchKeyLines* seen) {
    const KeyValue& first = l.pairs[0];
    std::vector<std::string> names;
    try {
        names = expand_hostlist(first.value);
    } catch (const HostlistError& e) {
        throw ConfigError(file, l.line, first.key, e.what());
    }
    if (l.pairs.size() == 1)
        throw ConfigError(file, l.line, first.key, "SwitchName line without Uplink, Downlink or Schedd");
    for (const std::string& n : names) {
        std::map<std::string, int>& keys = (*seen)[n];
        if (keys.empty()) {
            SwitchConfig s;
            s.name = n;
            s.line = l.line;
            cfg->switches.push_back(s);
        }
        SwitchConfig* sw = nullptr;
        for (SwitchConfig& s : cfg->switches)
            if (s.name == n) sw = &s;
        for (std::size_t i = 1; i < l.pairs.size(); ++i) {
            const KeyValue& kv = l.pairs[i];
            std::string k = lowercase(kv.key);
            if (k != "uplink" && k != "downlink" && k != "schedd") {
                std::string why = find_key(kv.key) ? "is a global key: put it on its own line, not on a SwitchName line"
                                  : k == "nodes" || k == "switches" || k == "linkspeed"
                                      ? "belongs in Slurm's topology.conf (TopologyFile), not in harmonics.conf"
                                      : "unknown key on a SwitchName line (use Uplink, Downlink, Schedd)";
                throw ConfigError(file, l.line, kv.key, why);
            }
            auto dup = keys.find(k);
            if (dup != keys.end())
                throw ConfigError(file, l.line, kv.key,
                                  dup->second == l.line ? "given twice on one line"
                                                        : "switch '" + n + "' already has one (line " +
                                                              std::to_string(dup->second) + ")");
            keys[k] = l.line;
            std::string problem;
            if (k == "uplink") problem = set_bandwidth(&sw->uplink_Bps, kv.value);
            else if (k == "downlink") problem = set_bandwidth(&sw->downlink_Bps, kv.value);
            else if (names.size() > 1) problem = "one harmonics-schedd per leaf: give Schedd on a line naming one switch";
            else problem = set_address(&sw->schedd, kv.value, true);
            if (!problem.empty()) throw ConfigError(file, l.line, kv.key, problem);
        }
    }
}

}  // namespace

const SwitchConfig* HarmonicsConfig::find_switch(const std::string& name) const {
    for (const SwitchConfig& s : switches)
        if (s.name == name) return &s;
    return nullptr;
}

HarmonicsConfig parse_harmonics_conf_text(const std::string& text, const std::string& filename) {
    HarmonicsConfig cfg;
    cfg.path = filename;
    std::map<std::string, int> key_lines;     // canonical key -> line, for duplicates
    SwitchKeyLines switch_keys;
    for (const KeyValueLine& l : split_key_value_lines(text, filename)) {
        if (lowercase(l.pairs[0].key) == "switchname") {
            parse_switch_line(l, filename, &cfg, &switch_keys);
            continue;
        }
        for (const KeyValue& kv : l.pairs) {
            std::string k = lowercase(kv.key);
            if (k == "switchname") throw ConfigError(filename, l.line, kv.key, "SwitchName must start its line");
            if (k == "uplink" || k == "downlink" || k == "schedd")
                throw ConfigError(filename, l.line, kv.key, "belongs on a SwitchName line (SwitchName=rack1 " + kv.key + "=...)");
            const KeySpec* spec = find_key(kv.key);
            if (!spec) throw ConfigError(filename, l.line, kv.key, "unknown key (see harmonics.conf(5))");
            auto dup = key_lines.find(spec->name);
            if (dup != key_lines.end())
                throw ConfigError(filename, l.line, kv.key, "given twice (first at line " + std::to_string(dup->second) + ")");
            key_lines[spec->name] = l.line;
            std::string problem = spec->set(cfg, kv.value);
            if (!problem.empty()) throw ConfigError(filename, l.line, kv.key, problem);
        }
    }
    // Relations between keys, reported at the line of the key that breaks them.
    auto line_of = [&](const char* k) { return key_lines.count(k) ? key_lines[k] : 0; };
    if (cfg.slot_s >= cfg.epoch_s) {
        const char* k = line_of("Slot") ? "Slot" : "Epoch";
        throw ConfigError(filename, line_of(k), k,
                          "Slot (" + format_duration(cfg.slot_s) + ") must be shorter than Epoch (" +
                              format_duration(cfg.epoch_s) + ")");
    }
    if (cfg.local_budget_s >= cfg.epoch_s) {
        const char* k = line_of("LocalBudget") ? "LocalBudget" : "Epoch";
        throw ConfigError(filename, line_of(k), k,
                          "LocalBudget (" + format_duration(cfg.local_budget_s) + ") must be shorter than Epoch (" +
                              format_duration(cfg.epoch_s) + ")");
    }
    cfg.topology_file_line = line_of("TopologyFile");
    if (!cfg.topology_file.empty() && cfg.topology_file[0] != '/')
        cfg.topology_file = folder_of(filename) + cfg.topology_file;
    return cfg;
}

HarmonicsConfig parse_harmonics_conf(const std::string& path) {
    return parse_harmonics_conf_text(read_config_file(path), path);
}

std::vector<std::string> harmonics_conf_keys() {
    std::vector<std::string> keys;
    for (const KeySpec& s : kGlobalKeys) keys.push_back(s.name);
    for (const char* k : {"SwitchName", "Uplink", "Downlink", "Schedd"}) keys.push_back(k);
    return keys;
}

std::string format_harmonics_conf(const HarmonicsConfig& c) {
    std::ostringstream o;
    auto line = [&o](const char* key, const std::string& value) {
        bool quote = value.empty() || value.find_first_of(" \t#") != std::string::npos;
        o << key << "=" << (quote ? "\"" + value + "\"" : value) << "\n";
    };
    auto number = [](double v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.15g", v);
        return std::string(buf);
    };
    auto yesno = [](bool b) { return std::string(b ? "yes" : "no"); };
    line("TopologyFile", c.topology_file);
    line("NodeBandwidth", format_bandwidth(c.node_Bps));
    line("Oversubscription", number(c.oversubscription));
    line("Policy", c.policy);
    line("Epoch", format_duration(c.epoch_s));
    line("Slot", format_duration(c.slot_s));
    line("ChangeThreshold", number(c.change_threshold));
    line("Guard", number(c.guard));
    line("LocalBudget", format_duration(c.local_budget_s));
    line("MaxStretch", number(c.max_stretch));
    line("DriftHorizon", format_duration(c.drift_horizon_s));
    line("SolverTimeLimit", format_duration(c.solver_time_limit_s));
    line("Seed", std::to_string(c.seed));
    line("SchedPort", std::to_string(c.sched_port));
    line("CoordAddress", c.coord_address);
    line("CoordSocket", c.coord_socket);
    line("CoordRounds", std::to_string(c.coord_rounds));
    line("PhaseGroups", yesno(c.phase_groups));
    line("FreeOutrunning", yesno(c.free_outrunning));
    line("ChargeWaits", yesno(c.charge_waits));
    line("AdminCommentInterval", format_duration(c.admin_comment_interval_s));
    line("StateFile", c.state_file);
    line("StateMaxAge", format_duration(c.state_max_age_s));
    line("SwitchWait", format_duration(c.switch_wait_s));
    line("Steering", yesno(c.steering));
    line("Gate", yesno(c.gate));
    line("GateCap", format_duration(c.gate_cap_s));
    line("ClockTolerance", format_duration(c.clock_tolerance_s));
    line("ReportInterval", format_duration(c.report_interval_s));
    line("ConnectTimeout", format_duration(c.connect_timeout_s));
    line("SlurmUser", c.slurm_user);
    if (!c.munge_socket.empty()) line("MungeSocket", c.munge_socket);
    line("MaxFrameSize", std::to_string(c.max_frame_bytes));
    line("LogFile", c.log_file);
    line("LogLevel", log_level_name(c.log_level));
    for (const SwitchConfig& s : c.switches) {
        o << "SwitchName=" << s.name;
        if (s.uplink_Bps > 0) o << " Uplink=" << format_bandwidth(s.uplink_Bps);
        if (s.downlink_Bps > 0) o << " Downlink=" << format_bandwidth(s.downlink_Bps);
        if (!s.schedd.empty()) o << " Schedd=" << s.schedd;
        o << "\n";
    }
    return o.str();
}

std::string default_harmonics_conf_path() {
    const char* env = std::getenv("HARMONICS_CONF");
    return env && *env ? env : "/etc/harmonics/harmonics.conf";
}

Topology parse_topology_conf_text(const std::string& text, const std::string& filename, const HarmonicsConfig& cfg) {
    Topology topo = build_topology(read_topology_conf_text(text, filename));
    const std::string conf_file = cfg.path.empty() ? "harmonics.conf" : cfg.path;
    topo.set_node_bandwidth(cfg.node_Bps);
    topo.set_oversubscription(cfg.oversubscription);
    for (const SwitchConfig& s : cfg.switches) {
        SwitchId id = topo.find_switch(s.name);
        if (id < 0)
            throw ConfigError(conf_file, s.line, "SwitchName", "switch '" + s.name + "' is not in " + filename);
        const Switch& w = topo.sw(id);
        if (w.parent == -1 && (s.uplink_Bps > 0 || s.downlink_Bps > 0))
            throw ConfigError(conf_file, s.line, s.uplink_Bps > 0 ? "Uplink" : "Downlink",
                              "switch '" + s.name + "' is the top of the tree: it has no uplink or downlink");
        if (!s.schedd.empty() && w.nodes.empty())
            throw ConfigError(conf_file, s.line, "Schedd",
                              "switch '" + s.name + "' has no nodes: harmonics-schedd runs per leaf switch");
        topo.set_switch_bandwidth(id, s.uplink_Bps, s.downlink_Bps);
    }
    topo.finalize();
    return topo;
}

Topology parse_topology_conf(const std::string& path, const HarmonicsConfig& cfg) {
    return parse_topology_conf_text(read_config_file(path), path, cfg);
}

Topology load_topology(const HarmonicsConfig& cfg) {
    std::string text;
    try {
        text = read_config_file(cfg.topology_file);
    } catch (const ConfigError& e) {
        // Point at the TopologyFile line, where the admin can fix it.
        throw ConfigError(cfg.path.empty() ? "harmonics.conf" : cfg.path, cfg.topology_file_line, "TopologyFile",
                          "cannot read '" + cfg.topology_file + "'" + (cfg.topology_file_line ? "" : " (the default)") +
                              ": " + strip_prefix(e.problem(), "cannot read: "));
    }
    return parse_topology_conf_text(text, cfg.topology_file, cfg);
}

SwitchId leaf_of_host(const Topology& topo, const std::string& hostname) {
    NodeId n = topo.find_node(hostname);
    if (n < 0) {
        std::size_t dot = hostname.find('.');
        if (dot == std::string::npos || dot == 0) return -1;
        n = topo.find_node(hostname.substr(0, dot));
        if (n < 0) return -1;
    }
    return topo.node(n).leaf;
}

std::string schedd_address(const HarmonicsConfig& cfg, const Topology& topo, SwitchId leaf) {
    if (leaf < 0 || leaf >= static_cast<SwitchId>(topo.switches().size())) return "";
    const SwitchConfig* s = cfg.find_switch(topo.sw(leaf).name);
    if (!s || s->schedd.empty()) return "";
    std::string host;
    int port;
    if (split_host_port(s->schedd, &host, &port)) return s->schedd;
    return s->schedd + ":" + std::to_string(cfg.sched_port);
}

}  // namespace harmonics
