#include "topology/topology.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace harmonics {

SwitchId Topology::add_switch(const std::string& name) {
    if (switch_by_name_.count(name) || node_by_name_.count(name))
        throw std::invalid_argument("duplicate name '" + name + "'");
    SwitchId id = static_cast<SwitchId>(switches_.size());
    switches_.push_back(Switch{name, -1, {}, {}, 0, -1, -1});
    switch_Bps_.push_back({0.0, 0.0});
    switch_by_name_[name] = id;
    finalized_ = false;
    return id;
}

NodeId Topology::add_node(const std::string& name, SwitchId leaf) {
    if (node_by_name_.count(name) || switch_by_name_.count(name))
        throw std::invalid_argument("duplicate name '" + name + "'");
    NodeId id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back(Node{name, leaf, -1, -1});
    switches_.at(leaf).nodes.push_back(id);
    node_by_name_[name] = id;
    finalized_ = false;
    return id;
}

void Topology::set_parent(SwitchId child, SwitchId parent) {
    if (switches_.at(child).parent != -1 && switches_[child].parent != parent)
        throw std::invalid_argument("switch '" + switches_[child].name + "' has two parents");
    if (switches_[child].parent == parent) return;
    switches_[child].parent = parent;
    switches_.at(parent).children.push_back(child);
    finalized_ = false;
}

void Topology::set_switch_bandwidth(SwitchId s, double up, double down) {
    switch_Bps_.at(s) = {up, down};
}

double Topology::subtree_Bps(SwitchId s) const {
    const Switch& w = switches_[s];
    double sum = node_Bps_ * static_cast<double>(w.nodes.size());
    for (SwitchId c : w.children) {
        double c_up = switch_Bps_[c].first > 0 ? switch_Bps_[c].first : subtree_Bps(c) / oversub_;
        sum += c_up;
    }
    return sum;
}

void Topology::finalize() {
    // Levels bottom-up; a loop in the tree shows up as a parent chain longer
    // than the number of switches.
    for (SwitchId s = 0; s < static_cast<SwitchId>(switches_.size()); ++s) {
        int steps = 0;
        for (SwitchId p = switches_[s].parent; p != -1; p = switches_[p].parent)
            if (++steps > static_cast<int>(switches_.size()))
                throw std::invalid_argument("loop in the switch tree at '" + switches_[s].name + "'");
    }
    std::function<int(SwitchId)> level = [&](SwitchId s) {
        int l = 0;
        for (SwitchId c : switches_[s].children) l = std::max(l, level(c) + 1);
        return switches_[s].level = l;
    };
    for (SwitchId s = 0; s < static_cast<SwitchId>(switches_.size()); ++s)
        if (switches_[s].parent == -1) level(s);

    links_.clear();
    for (NodeId n = 0; n < static_cast<NodeId>(nodes_.size()); ++n) {
        nodes_[n].up = static_cast<LinkId>(links_.size());
        links_.push_back(Link{nodes_[n].name + ":up", LinkKind::NodeUp, n, node_Bps_});
        nodes_[n].down = static_cast<LinkId>(links_.size());
        links_.push_back(Link{nodes_[n].name + ":down", LinkKind::NodeDown, n, node_Bps_});
    }
    for (SwitchId s = 0; s < static_cast<SwitchId>(switches_.size()); ++s) {
        Switch& w = switches_[s];
        w.up = w.down = -1;
        if (w.parent == -1) continue;
        double derived = subtree_Bps(s) / oversub_;
        double up = switch_Bps_[s].first > 0 ? switch_Bps_[s].first : derived;
        double down = switch_Bps_[s].second > 0 ? switch_Bps_[s].second : up;
        w.up = static_cast<LinkId>(links_.size());
        links_.push_back(Link{w.name + ":uplink", LinkKind::SwitchUp, s, up});
        w.down = static_cast<LinkId>(links_.size());
        links_.push_back(Link{w.name + ":downlink", LinkKind::SwitchDown, s, down});
    }
    finalized_ = true;
}

Topology Topology::make_two_level(int racks, int nodes_per_rack, double node_Bps, double oversub,
                                  const std::string& node_prefix, const std::string& rack_prefix) {
    Topology t;
    t.set_node_bandwidth(node_Bps);
    t.set_oversubscription(oversub);
    SwitchId spine = t.add_switch("spine");
    int n = 1;
    for (int r = 1; r <= racks; ++r) {
        SwitchId leaf = t.add_switch(rack_prefix + std::to_string(r));
        t.set_parent(leaf, spine);
        for (int i = 0; i < nodes_per_rack; ++i) t.add_node(node_prefix + std::to_string(n++), leaf);
    }
    t.finalize();
    return t;
}

std::vector<SwitchId> Topology::leaves() const {
    std::vector<SwitchId> out;
    for (SwitchId s = 0; s < static_cast<SwitchId>(switches_.size()); ++s)
        if (!switches_[s].nodes.empty()) out.push_back(s);
    return out;
}

NodeId Topology::find_node(const std::string& name) const {
    auto it = node_by_name_.find(name);
    return it == node_by_name_.end() ? -1 : it->second;
}

SwitchId Topology::find_switch(const std::string& name) const {
    auto it = switch_by_name_.find(name);
    return it == switch_by_name_.end() ? -1 : it->second;
}

SwitchId Topology::common_ancestor(SwitchId a, SwitchId b) const {
    while (a != b) {
        if (a == -1 || b == -1) return -1;
        if (switches_[a].level <= switches_[b].level) a = switches_[a].parent;
        else b = switches_[b].parent;
    }
    return a;
}

std::vector<LinkId> Topology::path(NodeId a, NodeId b) const {
    std::vector<LinkId> out;
    if (a == b) return out;
    out.push_back(nodes_.at(a).up);
    SwitchId top = common_ancestor(nodes_[a].leaf, nodes_.at(b).leaf);
    for (SwitchId s = nodes_[a].leaf; s != top && s != -1; s = switches_[s].parent) out.push_back(switches_[s].up);
    std::vector<LinkId> down;
    for (SwitchId s = nodes_[b].leaf; s != top && s != -1; s = switches_[s].parent) down.push_back(switches_[s].down);
    out.insert(out.end(), down.rbegin(), down.rend());
    out.push_back(nodes_[b].down);
    return out;
}

}  // namespace harmonics
