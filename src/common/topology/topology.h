// The fabric as a tree: compute nodes under leaf (ToR) switches, leaves under
// spines, any number of levels. Every node has a NIC (one link up to its leaf,
// one down from it); every non-root switch has an uplink to its parent and a
// downlink from it. Traffic between two nodes climbs to their lowest common
// switch and comes back down, so its path is a list of links.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace harmonics {

using NodeId = int;
using SwitchId = int;
using LinkId = int;

enum class LinkKind { NodeUp, NodeDown, SwitchUp, SwitchDown };

struct Link {
    std::string name;       // "n1:up", "rack1:uplink", ...
    LinkKind kind;
    int owner;              // NodeId for NIC links, SwitchId for switch links
    double capacity_Bps;    // bytes per second
};

struct Node {
    std::string name;
    SwitchId leaf = -1;
    LinkId up = -1;         // NIC -> leaf
    LinkId down = -1;       // leaf -> NIC
};

struct Switch {
    std::string name;
    SwitchId parent = -1;
    std::vector<SwitchId> children;
    std::vector<NodeId> nodes;  // only leaves have nodes
    int level = 0;              // 0 for leaves, parent = max(child)+1
    LinkId up = -1;             // uplink to parent (absent at the root)
    LinkId down = -1;           // downlink from parent
    bool is_leaf() const { return !nodes.empty() || children.empty(); }
};

class Topology {
public:
    // Building. Names must be unique; add_switch_child/add_node_to_leaf may be
    // called in any order; finalize() computes levels and creates the links.
    SwitchId add_switch(const std::string& name);
    NodeId add_node(const std::string& name, SwitchId leaf);
    void set_parent(SwitchId child, SwitchId parent);
    // Capacities: NIC bandwidth for every node; uplink/downlink per switch.
    void set_node_bandwidth(double Bps) { node_Bps_ = Bps; }
    void set_switch_bandwidth(SwitchId s, double uplink_Bps, double downlink_Bps);
    // Default for switches without an explicit capacity: the sum of their
    // children's capacity divided by this oversubscription ratio.
    void set_oversubscription(double ratio) { oversub_ = ratio; }
    void finalize();

    // A ready-made tree: `racks` leaves of `nodes_per_rack` nodes each under one
    // spine, NICs of node_Bps, uplinks oversubscribed by `oversub`.
    static Topology make_two_level(int racks, int nodes_per_rack, double node_Bps, double oversub,
                                   const std::string& node_prefix = "n",
                                   const std::string& rack_prefix = "rack");

    // Queries.
    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<Switch>& switches() const { return switches_; }
    const std::vector<Link>& links() const { return links_; }
    const Node& node(NodeId n) const { return nodes_.at(n); }
    const Switch& sw(SwitchId s) const { return switches_.at(s); }
    const Link& link(LinkId l) const { return links_.at(l); }
    std::vector<SwitchId> leaves() const;
    NodeId find_node(const std::string& name) const;      // -1 if absent
    SwitchId find_switch(const std::string& name) const;  // -1 if absent
    // Links crossed by traffic from node a to node b (empty when a == b).
    std::vector<LinkId> path(NodeId a, NodeId b) const;
    // Lowest switch that has both a and b below it.
    SwitchId common_ancestor(SwitchId a, SwitchId b) const;
    bool finalized() const { return finalized_; }

private:
    std::vector<Node> nodes_;
    std::vector<Switch> switches_;
    std::vector<Link> links_;
    std::unordered_map<std::string, NodeId> node_by_name_;
    std::unordered_map<std::string, SwitchId> switch_by_name_;
    std::vector<std::pair<double, double>> switch_Bps_;  // (up, down), 0 = derive
    double node_Bps_ = 12.5e9;   // 100 Gb/s
    double oversub_ = 1.0;
    bool finalized_ = false;
    double subtree_Bps(SwitchId s) const;
};

}  // namespace harmonics
