// bench-harmonics: how long harmonics' decisions take, and what they gain at scale.
//   leaf:    one local scheduler deciding 32 jobs that all cross its uplink
//            (cold: no previous schedule; warm: last decision as the start):
//            "models" two-node jobs of library models (an overloaded uplink),
//            "packable" short bursts that fit side by side (a real search)
//   cluster: one epoch of each policy on generated clusters with every job
//            active at once (--utilisation > 0: the busy, fragmented cluster
//            of generator.h; 0: the original empty-cluster placement)
//   jct:     simulated runs on generated clusters (--jct-sizes): mean JCT and
//            slowdown per policy against fair, with churn (--arrivals N at
//            --arrival-rate), measurement noise (--jitter X) and jobs whose
//            hooks only measure (--measuring X, a share of the jobs), and how often
//            running jobs' schedules were changed (reshuffles)
// Usage: bench-harmonics [--leaf-jobs N] [--repeat N] [--leaf-periods K] [--sizes 128,1024,8192] [--policies harmonics,cassini]
//          [--utilisation U] [--placement rack-aware|linear|scattered] [--oversubscription R] [--time-limit S] [--seed N]
//          [--jct-sizes 128,1024] [--jct-policies fair,harmonics,cassini] [--min-runtime S] [--max-runtime S]
//          [--arrivals N] [--arrival-rate PER_S] [--jitter X] [--measuring X] [--duration S] [--explain 1] [--models NAME,...]
//          [--start-phases aligned|random] [--learn-iterations N] [--time-limit-factor F]
//          [--tuning key=value,...]   (LocalTuning of the diagnostic policy harmonics-tuned)
#include "config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_library.h"
#include "model/traffic.h"
#include "policy/global_coordinator.h"
#include "policy/harmonics_local.h"
#include "policy/policy.h"
#include "policy/release.h"
#ifdef HAVE_CBC
#include "policy/optimal.h"
#endif
#include "sim/engine.h"
#include "sim/generator.h"
#include "sim/metrics.h"
#include "sim/placement_plan.h"
#include "sim/scenario.h"

using namespace harmonics;

namespace {

// CPU time of this thread: on a shared machine, what an idle core would take.
double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// part of whole, in percent (0 of nothing).
double share_pct(long part, long whole) { return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0; }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// `n` two-node jobs, each with one rank on rack 1 and one elsewhere, so every
// ring crosses rack 1's uplink and downlink.
std::vector<JobProfile> leaf_jobs(const Topology& topo, int n, unsigned seed) {
    const char* models[] = {"resnet50", "resnet101", "vgg16", "bert-base", "bert-large", "vit-b16", "transformer-big"};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, 6);
    std::vector<SwitchId> leaves = topo.leaves();
    std::vector<JobProfile> jobs;
    for (int i = 0; i < n; ++i) {
        JobSpec spec;
        spec.id = i + 1;
        spec.model = models[pick(rng)];
        spec.nodes = 2;
        NodeId a = topo.sw(leaves[0]).nodes[i];
        NodeId b = topo.sw(leaves[1 + i % (leaves.size() - 1)]).nodes[i / (leaves.size() - 1)];
        jobs.push_back(make_profile(topo, spec, *find_model(spec.model), {a, b}));
    }
    return jobs;
}

// `n` jobs whose bursts each take half the uplink for 6 ms of a 100 ms
// period: 32 of them fit two at a time (96 % of the link); free-running,
// three or more meet often, so the leaf searches for real (greedy + local
// search beyond 8 jobs).
// With `periods` > 1 the jobs cycle over that many distinct periods
// (100 ms, 137 ms, 174 ms, ...: no one divides another).
std::vector<JobProfile> packable_jobs(const Topology& topo, int n, int periods) {
    const Switch& leaf = topo.sw(topo.leaves()[0]);
    std::vector<JobProfile> jobs;
    for (int i = 0; i < n; ++i) {
        JobProfile j;
        j.id = i + 1;
        j.isolated_period_s = 0.100 * (1.0 + 0.37 * (i % std::max(1, periods)));
        j.compute_s = j.isolated_period_s - 0.006;
        CommPhase ph;
        ph.start_offset_s = j.compute_s;
        ph.alone_s = 0.006;
        ph.bytes_per_edge = 0.5 * topo.link(leaf.up).capacity_Bps * ph.alone_s;
        ph.links = {{leaf.up, 1.0}, {leaf.down, 1.0}};
        j.phases.push_back(ph);
        jobs.push_back(j);
    }
    return jobs;
}

void bench_leaf(int n, int repeat, bool packable, int periods) {
    Topology topo = Topology::make_two_level(9, std::max(n, 8), 12.5e9, 3.0);
    std::vector<JobProfile> jobs = packable ? packable_jobs(topo, n, periods) : leaf_jobs(topo, n, 7);
    LocalScheduler local(PolicyOptions{});
    LeafProblem pb;
    pb.leaf = topo.leaves()[0];
    pb.jobs = jobs;
    std::vector<double> cold, warm, cold_cpu, warm_cpu;
    LeafResult last;
    for (int r = 0; r < repeat; ++r) {
        pb.previous.clear();
        double c0 = thread_cpu_s();
        last = local.decide(topo, pb);
        cold_cpu.push_back(thread_cpu_s() - c0);
        cold.push_back(last.wall_s);
    }
    pb.previous = last.jobs;
    for (int r = 0; r < repeat; ++r) {
        double c0 = thread_cpu_s();
        warm.push_back(local.decide(topo, pb).wall_s);
        warm_cpu.push_back(thread_cpu_s() - c0);
    }
    std::printf("leaf kind=%s periods=%d jobs=%d cold_median_ms=%.3f cold_cpu_median_ms=%.3f cold_max_ms=%.3f warm_median_ms=%.3f "
                "warm_cpu_median_ms=%.3f warm_max_ms=%.3f gated=%zu free=%d predicted_cost=%.4f\n",
                packable ? "packable" : "models", packable ? periods : 0, n, median(cold) * 1e3, median(cold_cpu) * 1e3, *std::max_element(cold.begin(), cold.end()) * 1e3,
                median(warm) * 1e3, median(warm_cpu) * 1e3, *std::max_element(warm.begin(), warm.end()) * 1e3,
                last.jobs.size() - last.free_jobs, last.free_jobs, last.predicted_cost);
}

// Why the local schedulers decide as they do: each leaf that two or more
// jobs load, decided alone (every job owned, nothing fixed, no warm start:
// the coordinator's first round for a leaf that owns all its jobs), with the
// leaf's own account of each plan's predicted cost and verdict.
void explain_leaves(const Topology& topo, const std::vector<JobProfile>& jobs) {
    LocalScheduler local(PolicyOptions{});
    for (SwitchId leaf : topo.leaves()) {
        std::vector<LinkId> links = leaf_links(topo, leaf);
        LeafProblem pb;
        pb.leaf = leaf;
        for (const JobProfile& j : jobs)
            if (job_loads(j, links)) pb.jobs.push_back(j);
        if (pb.jobs.size() < 2) continue;
        LeafResult r = local.decide(topo, pb);
        std::printf("explain leaf=%d jobs=%zu gated=%zu %s\n", leaf, pb.jobs.size(), r.jobs.size() - r.free_jobs,
                    r.explain.c_str());
    }
}

// "max_stretch=0.1,max_gated_residual=1e9,...": returns false on an unknown key.
bool parse_tuning(const std::string& text, LocalTuning* t) {
    std::stringstream ss(text);
    std::string kv;
    while (std::getline(ss, kv, ',')) {
        std::size_t eq = kv.find('=');
        if (eq == std::string::npos) return false;
        std::string k = kv.substr(0, eq);
        double v = std::atof(kv.c_str() + eq + 1);
        if (k == "max_stretch") t->max_stretch = v;
        else if (k == "wide_stretch") t->wide_stretch = v;
        else if (k == "guard") t->guard = v;
        else if (k == "max_gated_residual") t->max_gated_residual = v;
        else if (k == "slack_margin") t->slack_margin = v;
        else if (k == "take_margin") t->take_margin = v;
        else if (k == "doubt_margin") t->doubt_margin = v;
        else if (k == "keep_tolerance") t->keep_tolerance = v;
        else if (k == "exact_max_jobs") t->exact_max_jobs = static_cast<int>(v);
        else if (k == "max_shifts") t->max_shifts = static_cast<int>(v);
        else if (k == "absorb_measuring") t->absorb_measuring = v != 0;
        else if (k == "absorb_collision_weight") t->absorb_collision_weight = v;
        else if (k == "replay_gate") t->replay_gate = v != 0;
        else if (k == "free_outrunning") t->free_outrunning = v != 0;
        else if (k == "charge_waits") t->charge_waits = v != 0;
        else return false;
    }
    return true;
}

LocalTuning g_tuning;  // --tuning, for harmonics-tuned

std::unique_ptr<Policy> make_bench_policy(const std::string& name, const PolicyOptions& opts) {
    // A diagnostic variant (--tuning key=value,...): the same two tiers with
    // other local-scheduler rules, without rebuilding the library.
    if (name == "harmonics-tuned") return make_harmonics_policy(opts, g_tuning, "harmonics-tuned");
    return make_policy(name, opts);
}

struct BenchOptions {
    double utilisation = 0.9;
    sim::PlacementRule placement = sim::PlacementRule::RackAware;
    double oversubscription = 3;
    double time_limit_s = 10;  // optimal's solver limit per decision
    unsigned seed = 1;
    double min_runtime_s = 20, max_runtime_s = 60;  // jct runs
    int arrivals = 0;
    double arrival_rate = 0.3;
    double jitter = 0;
    double measuring = 0;  // share of the jobs whose hooks never hold (Gate=no)
    bool random_phases = false;   // jobs at time 0 start within their first period
    long learn_iterations = 0;    // iterations a job runs free before the policies know it
    double time_limit_factor = sim::EngineConfig{}.time_limit_factor;   // jobs' time limits, x isolated runtime
    double duration_s = 0;
    bool explain = false;
    std::vector<std::string> models;  // generator's model mix; empty: the whole library
};

sim::GeneratorParams cluster_params(int nodes, const BenchOptions& o) {
    sim::GeneratorParams gp;
    gp.nodes_per_rack = 8;
    gp.racks = nodes / gp.nodes_per_rack;
    gp.seed = o.seed;
    gp.utilisation = o.utilisation;
    gp.oversubscription = o.oversubscription;
    gp.placement = o.placement;
    gp.models = o.models;
    // The original regime: about a full cluster at its job sizes, all at once.
    gp.jobs = o.utilisation > 0 ? 0 : nodes / 6;
    return gp;
}

void bench_cluster(int nodes, const std::vector<std::string>& policies, const BenchOptions& o) {
    sim::GeneratorParams gp = cluster_params(nodes, o);
    sim::Scenario sc = sim::generate_scenario(gp);
    std::vector<sim::SimJob> placed = sim::prepare_jobs(sc);
    int busy = 0;
    for (const JobSpec& sp : sc.specs) busy += sp.nodes;
    sim::Fragmentation f = sim::fragmentation(sc.topo, sc.specs);
    std::printf("placement nodes=%d rule=%s busy=%d jobs=%d multi_node=%d spanning=%d leaf_fit=%d leaf_fit_spanning=%d "
                "shared_uplinks=%d crowded_uplinks=%d max_per_uplink=%d\n",
                nodes, sim::placement_rule_name(o.placement), busy, f.jobs, f.multi_node, f.spanning, f.leaf_fit, f.leaf_fit_spanning, f.shared_uplinks,
                f.crowded_uplinks, f.max_per_uplink);
    std::vector<JobProfile> jobs;
    for (const sim::SimJob& j : placed) jobs.push_back(j.profile);
    if (o.explain) explain_leaves(sc.topo, jobs);
    for (const std::string& name : policies) {
        PolicyOptions opts;
        opts.time_limit_s = o.time_limit_s;
        opts.seed = o.seed;
        std::unique_ptr<Policy> p = make_bench_policy(name, opts);
        if (!p) {
            std::fprintf(stderr, "bench-harmonics: unknown policy %s\n", name.c_str());
            continue;
        }
        double t0 = thread_cpu_s();
        Decisions first = p->decide(sc.topo, jobs, 0, EpochReason::Arrival);
        double cpu1 = thread_cpu_s() - t0;
        t0 = thread_cpu_s();
        Decisions again = p->decide(sc.topo, jobs, 1, EpochReason::Epoch);
        double cpu2 = thread_cpu_s() - t0;
        size_t gated = 0;
        for (const auto& [id, d] : again.jobs) gated += d.gated;
        std::printf("cluster nodes=%d leaves=%d jobs=%zu policy=%s first_sched_ms=%.3f epoch_sched_ms=%.3f "
                    "first_cpu_ms=%.3f epoch_cpu_ms=%.3f gated=%zu\n",
                    nodes, gp.racks, jobs.size(), name.c_str(), first.sched_time_s * 1e3, again.sched_time_s * 1e3,
                    cpu1 * 1e3, cpu2 * 1e3, gated);
#ifdef HAVE_CBC
        // The first decision's solve is the one to quote: the repeat reuses it.
        if (const auto* opt = dynamic_cast<const OptimalPolicy*>(p.get()))
            std::printf("optimal nodes=%d time_limit_s=%.1f proven_optimal=%d gap=%.4f shifts_per_job=%d nonzeros=%ld\n",
                        nodes, o.time_limit_s, opt->last_report().optimal ? 1 : 0, opt->last_report().gap,
                        opt->shifts(), opt->last_report().nonzeros);
#endif
        std::fflush(stdout);
    }
}

// Passes decisions through and counts reshuffles: a job that had a decision
// in the previous round and now gets a different one (gated or not, period,
// or slot phase (origin + shift) mod period).
class ReshuffleCounter : public Policy {
public:
    explicit ReshuffleCounter(std::unique_ptr<Policy> inner) : inner_(std::move(inner)) {}
    std::string name() const override { return inner_->name(); }
    bool uses_priorities() const override { return inner_->uses_priorities(); }
    Decisions decide(const Topology& topo, const std::vector<JobProfile>& jobs, double now_s,
                     EpochReason why) override {
        Decisions d = inner_->decide(topo, jobs, now_s, why);
        for (const auto& [id, dec] : d.jobs) {
            ++decisions_;
            gated_ += dec.gated;
            if (dec.gated) ever_gated_.insert(id);
            auto it = last_.find(id);
            if (it == last_.end()) continue;
            ++kept_;
            if (changed(it->second, dec)) ++reshuffles_;
        }
        last_ = d.jobs;
        return d;
    }
    long reshuffles() const { return reshuffles_; }
    // Job decisions over all rounds, how many of them gated, and how many
    // distinct jobs were gated at least once.
    long decisions() const { return decisions_; }
    long gated() const { return gated_; }
    std::size_t jobs_ever_gated() const { return ever_gated_.size(); }
    long comparisons() const { return kept_; }

private:
    static bool changed(const JobDecision& a, const JobDecision& b) {
        if (a.gated != b.gated) return true;
        if (!a.gated) return false;
        if (std::fabs(a.period_s - b.period_s) > 1e-9 * std::max(1.0, a.period_s)) return true;
        if (a.period_s <= 0) return false;
        double dphi = std::fabs(gate_phase_s(a) - gate_phase_s(b));
        return std::min(dphi, a.period_s - dphi) > 1e-6;
    }
    std::unique_ptr<Policy> inner_;
    std::map<JobId, JobDecision> last_;
    long reshuffles_ = 0, kept_ = 0, decisions_ = 0, gated_ = 0;
    std::set<JobId> ever_gated_;
};

void bench_jct(int nodes, const std::vector<std::string>& policies, const BenchOptions& o) {
    sim::GeneratorParams gp = cluster_params(nodes, o);
    gp.min_runtime_s = o.min_runtime_s;
    gp.max_runtime_s = o.max_runtime_s;
    gp.jobs = o.arrivals;
    gp.arrival_rate = o.arrival_rate;
    gp.duration_s = o.duration_s;
    if (gp.utilisation <= 0 && gp.jobs < 1) gp.jobs = nodes / 6;
    sim::Scenario sc = sim::generate_scenario(gp);
    std::vector<sim::SimJob> placed = sim::prepare_jobs(sc);
    const int measuring = sim::mark_measuring(placed, o.measuring, o.seed);
    const int phased = o.random_phases ? sim::spread_start_phases(placed, sc.topo, o.seed) : 0;
    sim::Fragmentation f = sim::fragmentation(sc.topo, sc.specs);
    std::printf("jct-scenario nodes=%d placement=%s utilisation=%.2f jobs=%zu spanning=%d crowded_uplinks=%d arrivals=%d arrival_rate=%.3f jitter=%.3f "
                "runtime_s=%.0f-%.0f oversubscription=%.1f measuring=%d random_phases=%d learn_iterations=%ld "
                "time_limit_factor=%.2f\n",
                nodes, sim::placement_rule_name(o.placement), o.utilisation, placed.size(), f.spanning, f.crowded_uplinks, o.arrivals, o.arrival_rate, o.jitter,
                o.min_runtime_s, o.max_runtime_s, o.oversubscription, measuring, phased, o.learn_iterations,
                o.time_limit_factor);
    sim::EngineConfig ec;
    ec.epoch_s = sc.epoch_s;
    ec.end_s = sc.duration_s;
    ec.compute_jitter = o.jitter;
    ec.learn_iterations = o.learn_iterations;
    ec.time_limit_factor = o.time_limit_factor;
    ec.noise_seed = o.seed;
    double fair_jct = 0;
    for (const std::string& name : policies) {
        PolicyOptions opts;
        opts.time_limit_s = o.time_limit_s;
        opts.seed = o.seed;
        opts.search_work_per_s = sim::kSearchWorkPerS;   // JCT runs repeat; the timing steps keep the wall clock
        std::unique_ptr<Policy> inner = make_bench_policy(name, opts);
        if (!inner) {
            std::fprintf(stderr, "bench-harmonics: unknown policy %s\n", name.c_str());
            continue;
        }
        ReshuffleCounter p(std::move(inner));
        double t0 = thread_cpu_s();
        sim::RunResult r = sim::simulate(sc.topo, placed, &p, ec);
        double cpu = thread_cpu_s() - t0;
        sim::Summary sm = sim::summarize(r);
        if (name == "fair") fair_jct = sm.mean_jct_s;
        std::printf("jct nodes=%d policy=%s mean_jct_s=%.3f better_than_fair_pct=%+.2f mean_slowdown=%.4f "
                    "p99_slowdown=%.4f sched_ms_per_epoch=%.3f rounds=%zu reshuffles=%ld of=%ld gated_decisions=%ld "
                    "decisions=%ld jobs_ever_gated=%zu late_releases_pct=%.2f missed_slots_pct=%.2f sim_cpu_s=%.1f\n",
                    nodes, name.c_str(), sm.mean_jct_s, fair_jct > 0 ? 100.0 * (1.0 - sm.mean_jct_s / fair_jct) : 0.0,
                    sm.mean_slowdown, sm.p99_slowdown, sm.sched_ms_per_epoch, r.sched_time_s.size(), p.reshuffles(),
                    p.comparisons(), p.gated(), p.decisions(), p.jobs_ever_gated(), share_pct(r.late_releases, r.gated_releases),
                    share_pct(r.missed_slots, r.gated_releases), cpu);
        std::fflush(stdout);
    }
    sim::LowerBound lb = sim::lower_bound(sc.topo, placed, sc.duration_s);
    std::printf("jct nodes=%d policy=lower-bound mean_jct_s=%.3f better_than_fair_pct=%+.2f mean_slowdown=%.4f "
                "p99_slowdown=%.4f\n",
                nodes, lb.summary.mean_jct_s, fair_jct > 0 ? 100.0 * (1.0 - lb.summary.mean_jct_s / fair_jct) : 0.0,
                lb.summary.mean_slowdown, lb.summary.p99_slowdown);
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string x;
    while (std::getline(ss, x, ',')) out.push_back(x);
    return out;
}

void usage(FILE* f) {
    std::fprintf(f,
                 "usage: bench-harmonics [--OPTION VALUE]...   (doc/evaluation.md, doc/scale.md)\n"
                 "  one leaf:  --leaf-jobs N (32; 0: skip) --leaf-periods N (1) --repeat N (20)\n"
                 "  clusters:  --sizes N,N (128,1024,8192; \"\": skip) --policies NAME,NAME (harmonics,cassini)\n"
                 "             --time-limit S (optimal's solver limit, 10)\n"
                 "  JCT runs:  --jct-sizes N,N (none) --jct-policies NAME,NAME (fair,harmonics,cassini)\n"
                 "             --min-runtime S --max-runtime S (20, 60) --arrivals N (0) --arrival-rate PER_S (0.3)\n"
                 "             --jitter SHARE (0) --measuring SHARE (0) --duration S --explain 0|1\n"
                 "             --start-phases aligned|random (aligned: the running jobs start together)\n"
                 "             --learn-iterations N (0: policies know a job at its arrival; the daemons: 4)\n"
                 "             --time-limit-factor F (2: each job's time limit, x its isolated runtime; 0: none)\n"
                 "  generated: --utilisation U (0.9) --placement rack-aware|linear|scattered --oversubscription R (3)\n"
                 "             --models NAME,NAME (the whole library) --seed N (1) --tuning KEY=VALUE\n"
                 "  --help     this text\n");
}

}  // namespace

int main(int argc, char** argv) {
    int leaf_n = 32, repeat = 20, leaf_periods = 1;
    std::vector<std::string> sizes = {"128", "1024", "8192"}, policies = {"harmonics", "cassini"};
    std::vector<std::string> jct_sizes, jct_policies = {"fair", "harmonics", "cassini"};
    BenchOptions o;
    for (int i = 1; i < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        }
        // Every option takes a value: one left without is a mistake, not a
        // request for the default run (which takes minutes).
        if (i + 1 == argc) {
            std::fprintf(stderr, "bench-harmonics: %s needs a value\n", argv[i]);
            usage(stderr);
            return 2;
        }
        const char* v = argv[i + 1];
        if (a == "--leaf-jobs") leaf_n = std::atoi(v);
        else if (a == "--leaf-periods") leaf_periods = std::atoi(v);
        else if (a == "--repeat") repeat = std::atoi(v);
        else if (a == "--sizes") sizes = split(v);
        else if (a == "--policies") policies = split(v);
        else if (a == "--utilisation") o.utilisation = std::atof(v);
        else if (a == "--placement") {
            try {
                o.placement = sim::parse_placement_rule(v);
            } catch (const std::invalid_argument& e) {
                std::fprintf(stderr, "bench-harmonics: %s\n", e.what());
                return 2;
            }
        }
        else if (a == "--oversubscription") o.oversubscription = std::atof(v);
        else if (a == "--time-limit") o.time_limit_s = std::atof(v);
        else if (a == "--seed") o.seed = static_cast<unsigned>(std::atol(v));
        else if (a == "--jct-sizes") jct_sizes = split(v);
        else if (a == "--jct-policies") jct_policies = split(v);
        else if (a == "--min-runtime") o.min_runtime_s = std::atof(v);
        else if (a == "--max-runtime") o.max_runtime_s = std::atof(v);
        else if (a == "--arrivals") o.arrivals = std::atoi(v);
        else if (a == "--arrival-rate") o.arrival_rate = std::atof(v);
        else if (a == "--jitter") o.jitter = std::atof(v);
        else if (a == "--measuring") {
            o.measuring = std::atof(v);
            if (!(o.measuring >= 0 && o.measuring <= 1)) {
                std::fprintf(stderr, "bench-harmonics: --measuring must be a share in [0, 1], not '%s'\n", v);
                return 2;
            }
        }
        else if (a == "--start-phases") {
            try {
                o.random_phases = sim::parse_start_phases(v);
            } catch (const std::invalid_argument& e) {
                std::fprintf(stderr, "bench-harmonics: %s\n", e.what());
                return 2;
            }
        }
        else if (a == "--learn-iterations") {
            char* end = nullptr;
            o.learn_iterations = std::strtol(v, &end, 10);
            if (end == v || *end != '\0' || o.learn_iterations < 0) {
                std::fprintf(stderr, "bench-harmonics: --learn-iterations must be a whole number >= 0, not '%s'\n", v);
                return 2;
            }
        }
        else if (a == "--time-limit-factor") {
            char* end = nullptr;
            o.time_limit_factor = std::strtod(v, &end);
            if (end == v || *end != '\0' || !(o.time_limit_factor >= 0)) {
                std::fprintf(stderr, "bench-harmonics: --time-limit-factor must be a number >= 0, not '%s'\n", v);
                return 2;
            }
        }
        else if (a == "--duration") o.duration_s = std::atof(v);
        else if (a == "--models") o.models = split(v);
        else if (a == "--explain") o.explain = std::atoi(v) != 0;
        else if (a == "--tuning") {
            if (!parse_tuning(v, &g_tuning)) {
                std::fprintf(stderr, "bench-harmonics: --tuning: bad key in '%s'\n", v);
                return 2;
            }
        }
        else {
            std::fprintf(stderr, "bench-harmonics: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (leaf_n > 0) {
        bench_leaf(leaf_n, std::max(1, repeat), false, 1);
        bench_leaf(leaf_n, std::max(1, repeat), true, 1);
        if (leaf_periods > 1) bench_leaf(leaf_n, std::max(1, repeat), true, leaf_periods);
    }
    for (const std::string& s : sizes) bench_cluster(std::atoi(s.c_str()), policies, o);
    for (const std::string& s : jct_sizes) bench_jct(std::atoi(s.c_str()), jct_policies, o);
    return 0;
}
