// Slurm's topology.conf (topology/tree): one line per switch,
//   SwitchName=rack1 Nodes=n[1-4]          a leaf and its nodes
//   SwitchName=spine Switches=rack[1-2]    a switch and its child switches
// keys in any case, `#` comments, LinkSpeed= accepted and ignored (Harmonics
// takes capacities from harmonics.conf). Any number of levels, one top.
#pragma once

#include <string>
#include <vector>

#include "config/config_error.h"
#include "topology/topology.h"

namespace harmonics {

struct TopologyConfSwitch {
    std::string name;
    std::vector<std::string> nodes;     // expanded Nodes=
    std::vector<std::string> switches;  // expanded Switches=
    int line = 0;
};

struct TopologyConf {
    std::string file;
    std::vector<TopologyConfSwitch> switches;  // in file order
};

// Syntax only: unknown keys, bad hostlists, missing SwitchName, a switch
// defined twice. Throws ConfigError (file, line, key).
TopologyConf read_topology_conf(const std::string& path);
TopologyConf read_topology_conf_text(const std::string& text, const std::string& filename);

// The tree: checks for no switches, a reference to an unknown switch, a node
// under two leaves, a switch with two parents, a loop, several tops, a switch
// with neither Nodes nor Switches, a name used for a node and a switch.
// Throws ConfigError naming the line. The result is not finalized: the caller
// sets capacities, then calls finalize().
Topology build_topology(const TopologyConf& conf);

}  // namespace harmonics
