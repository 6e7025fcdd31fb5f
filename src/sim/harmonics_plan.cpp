// harmonics-plan: the harmonics policy (local schedulers + global coordinator)
// without daemons or simulator. A plan file describes a small two-level fabric
// and periodic jobs; each epoch's decisions are printed as text, so golden
// tests can compare them with expected files.
//
//   # comment
//   fabric racks=2 nodes=4 nic_gbps=100 oversub=4
//   slot_ms 1
//   budget_ms 1000         per-leaf search budget (generous: golden output must
//                          not depend on machine load)
//   phase_groups off       the coordinator's phase families off (on by default,
//                          as in the policy; a golden about owners turns them off)
//   job id=1 period_ms=100 comm_ms=50 load=1.0 racks=rack1,rack2
//   epoch                  plan now; later lines change the job set
//   depart 1
//
// A job's collective crosses the uplink and downlink of every rack listed
// (when it lists two or more) at `load` times the first rack's uplink
// capacity. The last epoch is planned at the end of the file.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "policy/global_coordinator.h"
#include "policy/harmonics_local.h"
#include "sim/engine.h"

namespace harmonics {
namespace {

struct PlanJob {
    JobId id = 0;
    double period_ms = 0, comm_ms = 0, load = 1;
    std::vector<std::string> racks;
};

struct PlanError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class PlanRunner {
public:
    explicit PlanRunner(std::string file) : file_(std::move(file)) {
        opts_.local_budget_s = 1.0;
        opts_.search_work_per_s = sim::kSearchWorkPerS;   // golden output must not depend on the host's load
    }

    int run(std::istream& in, std::ostream& out) {
        std::string line;
        while (std::getline(in, line)) {
            ++lineno_;
            std::istringstream ls(line);
            std::string word;
            if (!(ls >> word) || word[0] == '#') continue;
            if (word == "fabric") fabric(ls);
            else if (word == "slot_ms") opts_.slot_s = number(ls, "slot_ms") / 1000;
            else if (word == "budget_ms") opts_.local_budget_s = number(ls, "budget_ms") / 1000;
            else if (word == "phase_groups") opts_.phase_groups = on_off(ls, "phase_groups");
            else if (word == "job") job(ls);
            else if (word == "depart") jobs_.erase(static_cast<JobId>(number(ls, "depart")));
            else if (word == "epoch") plan(out);
            else fail(word, "unknown directive");
        }
        plan(out);
        return 0;
    }

private:
    [[noreturn]] void fail(const std::string& key, const std::string& why) const {
        throw PlanError(file_ + ":" + std::to_string(lineno_) + ": " + key + ": " + why);
    }

    double number(std::istream& ls, const std::string& key) const {
        double v;
        if (!(ls >> v)) fail(key, "expected a number");
        return v;
    }

    bool on_off(std::istream& ls, const std::string& key) const {
        std::string w;
        if (!(ls >> w) || (w != "on" && w != "off")) fail(key, "expected on or off");
        return w == "on";
    }

    double value(const std::map<std::string, std::string>& kv, const std::string& key) const {
        auto it = kv.find(key);
        if (it == kv.end()) fail(key, "missing");
        try {
            size_t used = 0;
            double v = std::stod(it->second, &used);
            if (used != it->second.size()) throw std::invalid_argument(key);
            return v;
        } catch (const std::exception&) {
            fail(key, "'" + it->second + "' is not a number");
        }
    }

    std::map<std::string, std::string> pairs(std::istream& ls) const {
        std::map<std::string, std::string> kv;
        std::string tok;
        while (ls >> tok) {
            size_t eq = tok.find('=');
            if (eq == std::string::npos) fail(tok, "expected key=value");
            kv[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
        return kv;
    }

    void fabric(std::istream& ls) {
        auto kv = pairs(ls);
        topo_ = Topology::make_two_level(static_cast<int>(value(kv, "racks")), static_cast<int>(value(kv, "nodes")),
                                         value(kv, "nic_gbps") * 1e9 / 8, value(kv, "oversub"));
        have_fabric_ = true;
    }

    void job(std::istream& ls) {
        if (!have_fabric_) fail("job", "no fabric line before it");
        auto kv = pairs(ls);
        PlanJob j;
        j.id = static_cast<JobId>(value(kv, "id"));
        j.period_ms = value(kv, "period_ms");
        j.comm_ms = value(kv, "comm_ms");
        j.load = value(kv, "load");
        if (j.comm_ms <= 0 || j.comm_ms > j.period_ms) fail("comm_ms", "must be in (0, period_ms]");
        std::stringstream rs(kv.count("racks") ? kv.at("racks") : std::string());
        std::string r;
        while (std::getline(rs, r, ','))
            if (topo_.find_switch(r) < 0) fail("racks", "unknown rack '" + r + "'");
            else j.racks.push_back(r);
        if (j.racks.empty()) fail("racks", "missing");
        jobs_[j.id] = j;
    }

    JobProfile profile(const PlanJob& pj) const {
        JobProfile j;
        j.id = pj.id;
        j.isolated_period_s = pj.period_ms / 1000;
        j.compute_s = (pj.period_ms - pj.comm_ms) / 1000;
        for (const std::string& r : pj.racks) j.leaves.push_back(topo_.find_switch(r));
        CommPhase ph;
        ph.start_offset_s = j.compute_s;
        ph.alone_s = pj.comm_ms / 1000;
        if (pj.racks.size() >= 2)
            for (SwitchId s : j.leaves)
                for (LinkId l : leaf_links(topo_, s)) ph.links.push_back({l, 1.0});
        double cap = ph.links.empty() ? 1.0 : topo_.link(ph.links.front().link).capacity_Bps;
        ph.bytes_per_edge = pj.load * cap * ph.alone_s;
        j.phases.push_back(ph);
        return j;
    }

    void plan(std::ostream& out) {
        std::vector<JobProfile> profiles;
        for (const auto& [id, pj] : jobs_) profiles.push_back(profile(pj));
        LocalScheduler local(opts_);
        GlobalCoordinator coord = coord_;
        if (opts_.phase_groups) coord.use_phase_groups(phase_group_options(opts_, local.tuning()));
        CoordinationResult r = coord.plan(topo_, profiles, previous_, local, epoch_, &conflicts_);
        previous_ = r.jobs;
        char buf[256];
        out << "epoch " << ++epoch_ << "\n";
        for (const JobProfile& j : profiles) {
            auto d = r.jobs.find(j.id);
            if (d == r.jobs.end()) {
                out << "job " << j.id << " free (no leaf uplink)\n";
                continue;
            }
            // A phase family's member is the coordinator's, in window g of K.
            const JobDecision& x = d->second;
            std::string owner = x.owner_leaf >= 0 ? topo_.sw(x.owner_leaf).name : "coordinator";
            if (x.group >= 0) owner += " window=" + std::to_string(x.group) + "/" + std::to_string(x.groups);
            std::snprintf(buf, sizeof buf, "job %lld owner=%s gated=%d period_ms=%.3f shift_ms=%.3f\n",
                          static_cast<long long>(j.id), owner.c_str(), x.gated ? 1 : 0, x.period_s * 1000,
                          x.shift_s * 1000);
            out << buf;
        }
        std::snprintf(buf, sizeof buf, "predicted_cost=%.6f rounds=%d unsettled=%d\n", r.predicted_cost, r.rounds,
                      r.unsettled);
        out << buf;
    }

    std::string file_;
    int lineno_ = 0;
    Topology topo_;
    bool have_fabric_ = false;
    PolicyOptions opts_;
    GlobalCoordinator coord_;
    ConflictMemory conflicts_;   // epochs are 1 s apart here (now = the epoch's number)
    std::map<JobId, PlanJob> jobs_;
    std::map<JobId, JobDecision> previous_;
    int epoch_ = 0;
};

}  // namespace
}  // namespace harmonics

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: harmonics-plan FILE  (see the comment at the top of harmonics_plan.cpp)\n");
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "harmonics-plan: cannot open %s\n", argv[1]);
        return 1;
    }
    try {
        return harmonics::PlanRunner(argv[1]).run(in, std::cout);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "harmonics-plan: %s\n", e.what());
        return 1;
    }
}
