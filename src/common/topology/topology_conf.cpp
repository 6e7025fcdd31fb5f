#include "topology/topology_conf.h"

#include <map>
#include <unordered_map>

#include "config/kv_lines.h"
#include "topology/hostlist.h"

namespace harmonics {
namespace {

std::vector<std::string> expand_or_fail(const std::string& value, const std::string& file, int line,
                                        const std::string& key) {
    try {
        return expand_hostlist(value);
    } catch (const HostlistError& e) {
        throw ConfigError(file, line, key, e.what());
    }
}

}  // namespace

TopologyConf read_topology_conf_text(const std::string& text, const std::string& filename) {
    TopologyConf conf;
    conf.file = filename;
    std::unordered_map<std::string, int> defined_at;
    for (const KeyValueLine& l : split_key_value_lines(text, filename)) {
        TopologyConfSwitch sw;
        sw.line = l.line;
        bool has_nodes = false, has_switches = false;
        for (std::size_t i = 0; i < l.pairs.size(); ++i) {
            const KeyValue& kv = l.pairs[i];
            std::string key = lowercase(kv.key);
            if (i == 0 && key != "switchname")
                throw ConfigError(filename, l.line, kv.key, "a line must start with SwitchName=");
            if (key == "switchname") {
                if (i != 0) throw ConfigError(filename, l.line, kv.key, "SwitchName must start the line");
                if (kv.value.empty()) throw ConfigError(filename, l.line, kv.key, "empty switch name");
                if (kv.value.find_first_of("[],") != std::string::npos)
                    throw ConfigError(filename, l.line, kv.key, "one switch per line, not a hostlist: '" + kv.value + "'");
                sw.name = kv.value;
            } else if (key == "nodes") {
                if (has_nodes) throw ConfigError(filename, l.line, kv.key, "given twice on one line");
                has_nodes = true;
                sw.nodes = expand_or_fail(kv.value, filename, l.line, kv.key);
            } else if (key == "switches") {
                if (has_switches) throw ConfigError(filename, l.line, kv.key, "given twice on one line");
                has_switches = true;
                sw.switches = expand_or_fail(kv.value, filename, l.line, kv.key);
            } else if (key == "linkspeed") {
                // Slurm's relative link weight; capacities come from harmonics.conf.
            } else {
                throw ConfigError(filename, l.line, kv.key,
                                  "unknown key (topology.conf knows SwitchName, Nodes, Switches, LinkSpeed)");
            }
        }
        if (!has_nodes && !has_switches)
            throw ConfigError(filename, l.line, "SwitchName", "switch '" + sw.name + "' has neither Nodes= nor Switches=");
        auto seen = defined_at.find(sw.name);
        if (seen != defined_at.end())
            throw ConfigError(filename, l.line, "SwitchName",
                              "switch '" + sw.name + "' defined twice (first at line " + std::to_string(seen->second) + ")");
        defined_at[sw.name] = l.line;
        conf.switches.push_back(std::move(sw));
    }
    return conf;
}

TopologyConf read_topology_conf(const std::string& path) {
    return read_topology_conf_text(read_config_file(path), path);
}

Topology build_topology(const TopologyConf& conf) {
    const std::string& file = conf.file;
    if (conf.switches.empty()) throw ConfigError(file, 0, "", "no switches defined (expected SwitchName= lines)");
    Topology topo;
    for (const TopologyConfSwitch& s : conf.switches) topo.add_switch(s.name);  // names unique by now

    // Nodes: each under exactly one leaf, never named like a switch.
    std::unordered_map<std::string, const TopologyConfSwitch*> leaf_of;
    for (const TopologyConfSwitch& s : conf.switches) {
        for (const std::string& n : s.nodes) {
            if (topo.find_switch(n) >= 0)
                throw ConfigError(file, s.line, "Nodes", "'" + n + "' is the name of a switch, not a node");
            auto it = leaf_of.find(n);
            if (it != leaf_of.end()) {
                if (it->second == &s)
                    throw ConfigError(file, s.line, "Nodes", "node '" + n + "' listed twice under '" + s.name + "'");
                throw ConfigError(file, s.line, "Nodes",
                                  "node '" + n + "' is under two leaf switches: '" + it->second->name + "' (line " +
                                      std::to_string(it->second->line) + ") and '" + s.name + "'");
            }
            leaf_of[n] = &s;
            topo.add_node(n, topo.find_switch(s.name));
        }
    }

    // Child switches: each known, each with one parent.
    std::map<SwitchId, const TopologyConfSwitch*> parent_line;
    for (const TopologyConfSwitch& s : conf.switches) {
        SwitchId parent = topo.find_switch(s.name);
        for (const std::string& c : s.switches) {
            SwitchId child = topo.find_switch(c);
            if (child < 0) {
                std::string what = topo.find_node(c) >= 0 ? "'" + c + "' is a node, not a switch"
                                                          : "unknown switch '" + c + "' (no SwitchName=" + c + " line)";
                throw ConfigError(file, s.line, "Switches", what);
            }
            auto it = parent_line.find(child);
            if (it != parent_line.end()) {
                if (it->second == &s)
                    throw ConfigError(file, s.line, "Switches", "switch '" + c + "' listed twice under '" + s.name + "'");
                throw ConfigError(file, s.line, "Switches",
                                  "switch '" + c + "' has two parents: '" + it->second->name + "' (line " +
                                      std::to_string(it->second->line) + ") and '" + s.name + "'");
            }
            parent_line[child] = &s;
            topo.set_parent(child, parent);
        }
    }

    // A loop: following parents from a switch comes back to it.
    const std::size_t n = topo.switches().size();
    for (SwitchId s = 0; s < static_cast<SwitchId>(n); ++s) {
        std::string chain = topo.sw(s).name;
        std::size_t steps = 0;
        for (SwitchId p = topo.sw(s).parent; p != -1; p = topo.sw(p).parent) {
            chain += " -> " + topo.sw(p).name;
            if (p == s) throw ConfigError(file, conf.switches[s].line, "Switches", "loop in the switch tree: " + chain);
            if (++steps > n) break;  // a loop above s; reported when the walk starts on it
        }
    }

    // One top: traffic between any two nodes must have a common switch.
    std::vector<SwitchId> tops;
    for (SwitchId s = 0; s < static_cast<SwitchId>(n); ++s)
        if (topo.sw(s).parent == -1) tops.push_back(s);
    if (tops.size() > 1)
        throw ConfigError(file, conf.switches[tops[1]].line, "SwitchName",
                          "switches '" + topo.sw(tops[0]).name + "' and '" + topo.sw(tops[1]).name +
                              "' have no common parent (the tree needs one top switch)");
    return topo;
}

}  // namespace harmonics
