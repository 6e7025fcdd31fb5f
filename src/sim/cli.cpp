// Options, scenario assembly and the comparison loop of harmonics-sim.
#include "sim/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "config/harmonics_conf.h"
#include "config/policy_options.h"
#include "model/model_library.h"
#include "policy/policy.h"
#include "sim/generator.h"
#include "sim/metrics.h"
#include "sim/plots.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim/workload.h"

namespace harmonics {
namespace sim {

void print_usage() {
    std::puts(
        "usage: harmonics-sim [options]\n"
        "Simulates training jobs sharing a cluster fabric under each scheduling policy\n"
        "and prints slowdown, communication time, JCT and scheduling time per policy.\n"
        "With no options: the built-in testbed (24 servers, 3 racks), every policy.\n"
        "\n"
        "input:\n"
        "  --scenario NAME        a built-in scenario (--list shows them)\n"
        "  --topology FILE        Slurm topology.conf (capacities from --config)\n"
        "  --config FILE          harmonics.conf (NodeBandwidth, Oversubscription, Epoch, ...)\n"
        "  --workload FILE        jobs CSV: id,arrival_s,model,nodes,gpus_per_node,iterations[,placement]\n"
        "  --racks N --nodes-per-rack N --jobs N --arrival-rate PER_S --oversubscription R\n"
        "                         generate a large-cluster workload\n"
        "  --utilisation U        generated cluster busy and fragmented: a share U of its\n"
        "                         nodes running jobs at time 0 (doc/scale.md); --jobs more arrive\n"
        "  --placement RULE       generated jobs' node choice: rack-aware (topology/tree,\n"
        "                         the default) or linear (no topology plugin: Slurm's best\n"
        "                         fit over consecutive node indices, blind to leaves) or\n"
        "                         scattered (the same, node order unrelated to racks)\n"
        "  --models NAME[,NAME]   generated jobs' models, drawn uniformly from these\n"
        "                         (default: the whole model library, --list)\n"
        "  --min-runtime S --max-runtime S\n"
        "                         generated jobs' isolated runtime range (default 300-1800 s)\n"
        "  --seed N               generator and policy seed (default 1)\n"
        "run:\n"
        "  --policy NAME[,NAME]   policies to run (default: all registered)\n"
        "  --compare              run every registered policy (the default)\n"
        "  --duration S           stop after S simulated seconds (default: when all jobs end)\n"
        "  --epoch S              policy decision round (default: harmonics.conf Epoch, 1 s)\n"
        "  --time-limit S         optimal policy's solver limit per decision\n"
        "                         (default: harmonics.conf SolverTimeLimit; 1 s without --config)\n"
        "  --compute-jitter X     measurement noise: each iteration's compute time, and the\n"
        "                         moments its collectives become ready, times 1 +- up to X\n"
        "                         (uniform, drawn from --seed); e.g. 0.05\n"
        "  --measuring-share X    a share X of the jobs (drawn from --seed) measure only:\n"
        "                         their hooks never hold (Gate=no); harmonics plans them free,\n"
        "                         or where they lock behind gated bursts\n"
        "  --measuring-jobs ID,.. these jobs measure only (with or without --measuring-share)\n"
        "  --start-phases aligned|random\n"
        "                         jobs that start at time 0 (a busy cluster's running jobs,\n"
        "                         a testbed) begin together (aligned, the default) or each at\n"
        "                         a moment drawn from its first period (random, from --seed),\n"
        "                         as jobs already running at unrelated phases would\n"
        "  --pace-spread X        each job at a pace of its own: its compute and its\n"
        "                         collectives (bytes and offsets) times one factor drawn\n"
        "                         uniformly in 1 +- X (from --seed), as jobs of one model\n"
        "                         with other batch sizes run; e.g. 0.03\n"
        "  --learn-iterations N   a job runs N iterations free before the policies know it,\n"
        "                         as the daemons learn a job from its hooks' rhythm (4:\n"
        "                         its fifth is the first they gate); default 0: decided\n"
        "                         at its arrival\n"
        "  --time-limit-factor F  each job's time limit (the end Slurm gives it, which the\n"
        "                         policies see), F times its runtime on an idle fabric from\n"
        "                         its arrival; default 2; 0: no limit known\n"
        "  --gate-cap S           longest a collective is held at the gate (default:\n"
        "                         harmonics.conf GateCap; 0 = up to one period, the next slot)\n"
        "output:\n"
        "  --json FILE            figures under policies.<name>.* and lower_bound\n"
        "  --csv FILE             per-job results\n"
        "  --decisions FILE       every change of a job's gate schedule: when, its period,\n"
        "                         phase, late allowance, family window and deciding leaf\n"
        "  --out DIR              results.json, jobs.csv, decisions.csv and PNG plots\n"
        "                         (gnuplot) in DIR\n"
        "  --quiet                no progress line\n"
        "  --list                 built-in scenarios, policies and models\n"
        "  --help");
}

namespace {

double to_double(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || errno) throw std::invalid_argument(opt + ": '" + v + "' is not a number");
    return x;
}

long to_long(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || errno) throw std::invalid_argument(opt + ": '" + v + "' is not an integer");
    return x;
}

void split_names(const std::string& v, std::vector<std::string>& out) {
    std::size_t start = 0;
    while (start <= v.size()) {
        std::size_t comma = v.find(',', start);
        std::string name = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!name.empty()) out.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
}

bool make_dirs(const std::string& path) {
    for (std::size_t i = 1; i <= path.size(); ++i) {
        if (i < path.size() && path[i] != '/') continue;
        std::string part = path.substr(0, i);
        if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
}

}  // namespace

CliOptions parse_cli(int argc, char** argv) {
    CliOptions o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--topology") o.topology = value();
        else if (a == "--config") o.config = value();
        else if (a == "--workload") o.workload = value();
        else if (a == "--scenario") o.scenario = value();
        else if (a == "--policy") split_names(value(), o.policies);
        else if (a == "--compare") o.policies.clear();
        else if (a == "--duration") o.duration_s = to_double(a, value());
        else if (a == "--epoch") o.epoch_s = to_double(a, value());
        else if (a == "--time-limit") o.time_limit_s = to_double(a, value());
        else if (a == "--gate-cap") o.gate_cap_s = to_double(a, value());
        else if (a == "--racks") { o.racks = static_cast<int>(to_long(a, value())); o.generate = true; }
        else if (a == "--nodes-per-rack") { o.nodes_per_rack = static_cast<int>(to_long(a, value())); o.generate = true; }
        else if (a == "--jobs") { o.jobs = static_cast<int>(to_long(a, value())); o.generate = true; }
        else if (a == "--arrival-rate") { o.arrival_rate = to_double(a, value()); o.generate = true; }
        else if (a == "--utilisation") { o.utilisation = to_double(a, value()); o.generate = true; }
        else if (a == "--placement") { o.placement = value(); parse_placement_rule(o.placement); o.generate = true; }
        else if (a == "--models") { split_names(value(), o.models); o.generate = true; }
        else if (a == "--min-runtime") { o.min_runtime_s = to_double(a, value()); o.generate = true; }
        else if (a == "--max-runtime") { o.max_runtime_s = to_double(a, value()); o.generate = true; }
        else if (a == "--compute-jitter") o.compute_jitter = to_double(a, value());
        else if (a == "--measuring-share") o.measuring_share = to_double(a, value());
        else if (a == "--measuring-jobs") {
            std::vector<std::string> ids;
            split_names(value(), ids);
            for (const std::string& id : ids) o.measuring_jobs.push_back(static_cast<JobId>(to_long(a, id)));
        }
        else if (a == "--start-phases") o.random_phases = parse_start_phases(value());
        else if (a == "--pace-spread") o.pace_spread = to_double(a, value());
        else if (a == "--learn-iterations") o.learn_iterations = to_long(a, value());
        else if (a == "--time-limit-factor") o.time_limit_factor = to_double(a, value());
        else if (a == "--oversubscription") o.oversubscription = to_double(a, value());
        else if (a == "--seed") o.seed = static_cast<unsigned>(to_long(a, value()));
        else if (a == "--json") o.json = value();
        else if (a == "--csv") o.csv = value();
        else if (a == "--decisions") o.decisions = value();
        else if (a == "--out") o.out = value();
        else if (a == "--quiet" || a == "-q") o.quiet = true;
        else if (a == "--list") o.list = true;
        else if (a == "--help" || a == "-h") o.help = true;
        else throw std::invalid_argument("unknown option '" + a + "' (see --help)");
    }
    if (!(o.compute_jitter >= 0 && o.compute_jitter < 1)) throw std::invalid_argument("--compute-jitter must be in [0, 1)");
    if (o.learn_iterations < 0) throw std::invalid_argument("--learn-iterations must be >= 0");
    if (!(o.time_limit_factor >= 0)) throw std::invalid_argument("--time-limit-factor must be >= 0");
    if (!(o.pace_spread >= 0 && o.pace_spread < 0.5)) throw std::invalid_argument("--pace-spread must be in [0, 0.5)");
    if (!(o.measuring_share >= 0 && o.measuring_share <= 1))
        throw std::invalid_argument("--measuring-share must be in [0, 1]");
    if (o.duration_s == 0 || o.epoch_s == 0 || o.time_limit_s == 0)
        throw std::invalid_argument("--duration, --epoch and --time-limit must be > 0");
    if (!o.workload.empty() && (o.generate || !o.scenario.empty()))
        throw std::invalid_argument("--workload cannot be combined with --scenario or the generator");
    if (o.generate && !o.scenario.empty())
        throw std::invalid_argument("--scenario cannot be combined with the generator options");
    return o;
}

namespace {

void print_list() {
    std::puts("scenarios:");
    for (const std::string& s : scenario_names()) std::printf("  %s\n", s.c_str());
    std::puts("policies:");
    for (const std::string& p : policy_names()) std::printf("  %s\n", p.c_str());
    std::puts("models:");
    for (const ModelProfile& m : model_library())
        std::printf("  %-16s %6.0fM params, %6.1f ms compute on %s\n", m.name.c_str(), m.params / 1e6,
                    m.compute_s * 1e3, m.gpu.c_str());
}

// The fabric and jobs from files, from the generator or built in.
Scenario build_scenario(const CliOptions& o, HarmonicsConfig& cfg) {
    if (!o.config.empty()) cfg = parse_harmonics_conf(o.config);
    Scenario s;
    if (!o.workload.empty()) {
        if (!o.topology.empty()) s.topo = parse_topology_conf(o.topology, cfg);
        else if (!o.config.empty()) s.topo = load_topology(cfg);
        else s.topo = builtin_scenario("default").topo;
        s.name = "workload";
        s.description = o.workload;
        s.specs = parse_workload_csv(o.workload, s.topo);
    } else if (o.generate) {
        GeneratorParams p;
        p.racks = o.racks;
        p.nodes_per_rack = o.nodes_per_rack;
        p.jobs = o.jobs;
        p.arrival_rate = o.arrival_rate;
        p.oversubscription = o.oversubscription;
        p.seed = o.seed;
        p.utilisation = o.utilisation;
        p.placement = parse_placement_rule(o.placement);
        p.models = o.models;
        if (o.min_runtime_s >= 0) p.min_runtime_s = o.min_runtime_s;
        if (o.max_runtime_s >= 0) p.max_runtime_s = o.max_runtime_s;
        s = generate_scenario(p);
    } else {
        if (!o.topology.empty()) throw std::invalid_argument("--topology needs --workload (the jobs to run on it)");
        s = builtin_scenario(o.scenario.empty() ? "default" : o.scenario);
    }
    if (!o.config.empty()) s.epoch_s = cfg.epoch_s;
    if (o.epoch_s > 0) s.epoch_s = o.epoch_s;
    if (!(s.epoch_s > 0)) throw std::invalid_argument("the epoch must be > 0");
    if (o.duration_s > 0) s.duration_s = o.duration_s;
    return s;
}

PolicyOptions policy_options(const HarmonicsConfig& cfg, const CliOptions& o) {
    PolicyOptions p = harmonics::policy_options(cfg);
    // Without a harmonics.conf this is a demo or an experiment: keep the
    // optimal policy's solver to 1 s per decision so a comparison stays quick.
    p.time_limit_s = o.time_limit_s > 0 ? o.time_limit_s : o.config.empty() ? 1.0 : cfg.solver_time_limit_s;
    if (o.config.empty()) p.seed = o.seed;
    p.search_work_per_s = kSearchWorkPerS;
    return p;
}

int run(const CliOptions& o) {
    HarmonicsConfig cfg;
    Scenario sc = build_scenario(o, cfg);
    std::vector<SimJob> jobs = prepare_jobs(sc);
    if (spread_paces(jobs, o.pace_spread, o.seed) > 0) {
        char what[64];
        std::snprintf(what, sizeof what, " (each job at its own pace, 1 +- up to %g)", o.pace_spread);
        sc.description += what;
    }
    mark_measuring(jobs, o.measuring_share, o.seed);
    mark_measuring_jobs(jobs, o.measuring_jobs);
    if (o.random_phases && spread_start_phases(jobs, sc.topo, o.seed) > 0)
        sc.description += " (jobs at time 0 start at random phases)";
    if (o.learn_iterations > 0)
        sc.description += " (each job runs " + std::to_string(o.learn_iterations) + " iterations before the policies know it)";
    if (const auto n = std::count_if(jobs.begin(), jobs.end(), [](const SimJob& j) { return !j.profile.holds; }); n > 0)
        sc.description += " (" + std::to_string(n) + " of " + std::to_string(jobs.size()) + " jobs measuring only)";
    std::vector<std::string> names = o.policies.empty() ? policy_names() : o.policies;
    PolicyOptions popts = policy_options(cfg, o);
    popts.epoch_s = sc.epoch_s;

    EngineConfig ec;
    ec.epoch_s = sc.epoch_s;
    ec.end_s = sc.duration_s;
    ec.gate = cfg.gate;
    ec.gate_cap_s = o.gate_cap_s >= 0 ? o.gate_cap_s : cfg.gate_cap_s;
    ec.compute_jitter = o.compute_jitter;
    ec.learn_iterations = o.learn_iterations;
    ec.time_limit_factor = o.time_limit_factor;
    ec.noise_seed = o.seed;
    ec.progress = !o.quiet && isatty(STDERR_FILENO);
    if (!o.out.empty()) trace_window(sc, jobs, &ec.trace_from_s, &ec.trace_to_s);
    ec.record_decisions = !o.decisions.empty() || !o.out.empty();

    std::vector<PolicyRun> runs;
    for (const std::string& name : names) {
        std::unique_ptr<Policy> policy = make_policy(name, popts);
        if (!policy) {
            std::string known;
            for (const std::string& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
            throw std::invalid_argument("unknown policy '" + name + "' (known: " + known + ")");
        }
        ec.label = name;
        PolicyRun r;
        r.run = simulate(sc.topo, jobs, policy.get(), ec);
        r.summary = summarize(r.run);
        r.solver = policy->solver_figures();
        runs.push_back(std::move(r));
    }
    LowerBound lb = lower_bound(sc.topo, jobs, sc.duration_s);

    std::string title = "harmonics-sim: " + sc.description;
    print_table(stdout, title, runs, lb);
    std::fflush(stdout);  // the table before any note on stderr
    std::string json = o.json, csv = o.csv, decisions = o.decisions;
    if (!o.out.empty()) {
        if (!make_dirs(o.out)) throw std::runtime_error(o.out + ": cannot create: " + std::strerror(errno));
        if (json.empty()) json = o.out + "/results.json";
        if (csv.empty()) csv = o.out + "/jobs.csv";
        if (decisions.empty()) decisions = o.out + "/decisions.csv";
    }
    if (!json.empty() && !write_json(json, sc.name, o.seed, runs, lb))
        throw std::runtime_error(json + ": cannot write: " + std::strerror(errno));
    if (!csv.empty() && !write_jobs_csv(csv, runs, lb))
        throw std::runtime_error(csv + ": cannot write: " + std::strerror(errno));
    if (!decisions.empty() && !write_decisions_csv(decisions, sc.topo, runs))
        throw std::runtime_error(decisions + ": cannot write: " + std::strerror(errno));
    if (!o.out.empty()) {
        bool ok = true;
        std::string note = write_plots(o.out, sc.topo, runs, lb, &ok);
        if (!ok) throw std::runtime_error(o.out + ": cannot write the plot data");
        if (!o.quiet) std::fprintf(stderr, "harmonics-sim: %s\n", note.c_str());
    }
    return 0;
}

}  // namespace

int run_cli(int argc, char** argv) {
    try {
        CliOptions o = parse_cli(argc, argv);
        if (o.help) {
            print_usage();
            return 0;
        }
        if (o.list) {
            print_list();
            return 0;
        }
        return run(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "harmonics-sim: %s\n", e.what());
        return 1;
    }
}

}  // namespace sim
}  // namespace harmonics
