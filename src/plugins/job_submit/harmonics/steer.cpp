// Steering decision (see steer.h). Pure: no I/O, no Slurm types.
#include "steer.h"

#include <cstdio>
#include <exception>
#include <unordered_set>
#include <vector>

#include "topology/hostlist.h"

namespace harmonics::steer {

namespace {

Decision untouched(const std::string& why, const char* fail_kind = nullptr) {
    Decision d;
    d.why = why;
    d.fail_open = fail_kind != nullptr;
    if (fail_kind) d.fail_kind = fail_kind;
    return d;
}

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0fs", s);
    return buf;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (const std::string& p : parts) {
        if (!out.empty()) out += sep;
        out += p;
    }
    return out;
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) comma = s.size();
        if (comma > start) out.push_back(s.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// Nodes of each leaf that the job may use: all of them when the summary has no
// partitions; otherwise those in the job's partition(s). False when the job's
// partition is not in the summary (or a hostlist is bad): then no leaf may be
// excluded, since Slurm would reject a constraint the partition cannot meet.
bool usable_nodes(const JobRequest& job, const state::Summary& s, std::vector<uint32_t>* usable) {
    usable->clear();
    if (s.partitions.empty()) {
        for (const state::LeafSummary& leaf : s.leaves) usable->push_back(leaf.size);
        return true;
    }
    std::vector<std::string> names = split_commas(job.partition);
    if (names.empty())
        for (const state::PartitionSummary& p : s.partitions)
            if (p.is_default) names.push_back(p.name);
    if (names.empty()) return false;
    try {
        std::unordered_set<std::string> in_partition;
        for (const std::string& name : names) {
            const state::PartitionSummary* part = nullptr;
            for (const state::PartitionSummary& p : s.partitions)
                if (p.name == name) part = &p;
            if (!part) return false;
            for (std::string& n : expand_hostlist(part->nodes)) in_partition.insert(std::move(n));
        }
        for (const state::LeafSummary& leaf : s.leaves) {
            uint32_t n = 0;
            for (const std::string& node : expand_hostlist(leaf.nodes)) n += in_partition.count(node) ? 1 : 0;
            usable->push_back(n);
        }
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

}  // namespace

Decision decide(const JobRequest& job, const state::Summary* summary, const Settings& settings, double now) {
    if (!settings.steering) return untouched("steering disabled (Steering=no)");
    if (job.min_nodes <= 1) return untouched("one node");
    if (job.user_switches || job.user_features || job.user_prefer || job.user_nodelist || job.user_exclude)
        return untouched("user chose placement");
    if (!summary) return untouched("no leaf summary", "missing");
    const double age = now - summary->written;
    if (age > settings.state_max_age_s)
        return untouched("leaf summary is " + seconds(age) + " old (StateMaxAge " + seconds(settings.state_max_age_s) +
                             ")", "stale");
    if (summary->leaves.empty()) return untouched("leaf summary lists no leaves", "empty");

    std::vector<uint32_t> usable;
    const bool partition_known = usable_nodes(job, *summary, &usable);
    if (!partition_known) {
        // Sizes only tell whether one leaf could hold the job.
        usable.clear();
        for (const state::LeafSummary& leaf : summary->leaves) usable.push_back(leaf.size);
    }
    uint32_t largest = 0, accepted_nodes = 0;
    bool all_featured = true;
    std::vector<std::string> accepted, rejected_nodes, accepted_names;
    for (size_t i = 0; i < summary->leaves.size(); ++i) {
        const state::LeafSummary& leaf = summary->leaves[i];
        if (usable[i] == 0) continue;   // not in the job's partition
        if (usable[i] > largest) largest = usable[i];
        if (leaf.feature.empty()) all_featured = false;
        if (leaf.accept) {
            accepted_nodes += usable[i];
            accepted.push_back(leaf.feature);
            accepted_names.push_back(leaf.name);
        } else {
            rejected_nodes.push_back(leaf.nodes);
        }
    }
    const bool fits_one_leaf = job.min_nodes <= largest;
    // Avoid rejected uplinks only when the accepted leaves can hold the job.
    const bool avoid =
        partition_known && !rejected_nodes.empty() && !accepted.empty() && job.min_nodes <= accepted_nodes;
    if (!fits_one_leaf && !avoid) {
        if (!partition_known) return untouched("spans leaves; partition '" + job.partition + "' not in the leaf summary");
        if (rejected_nodes.empty()) return untouched("spans leaves; every uplink accepts it");
        return untouched("spans leaves; accepted leaves hold " + std::to_string(accepted_nodes) + " of " +
                         std::to_string(job.min_nodes) + " nodes");
    }

    Decision d;
    d.steered = true;
    std::string what;
    if (fits_one_leaf) {
        d.req_switch = 1;
        d.wait4switch_s = static_cast<uint32_t>(settings.switch_wait_s < 0 ? 0 : settings.switch_wait_s);
        what = "one-leaf wait=" + std::to_string(d.wait4switch_s) + "s";
    }
    if (avoid) {
        if (all_featured) {
            d.features = join(accepted, "|");
        } else {
            d.exc_nodes = join(rejected_nodes, ",");
        }
        if (!what.empty()) what += " ";
        what += "leaves=" + join(accepted_names, "|");
    }
    d.why = what;
    d.tag = "harmonics-steer: " + what + " epoch=" + std::to_string(summary->epoch);
    return d;
}

}  // namespace harmonics::steer
