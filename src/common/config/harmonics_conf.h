// harmonics.conf: the one configuration file every Harmonics part reads (the
// daemons, the Slurm plugins, the NCCL hook and the simulator). slurm.conf
// style: `Key=Value` pairs, several per line, `#` comments, keys in any case.
// A line starting with SwitchName= describes one switch of topology.conf
// (Uplink, Downlink, Schedd). Every key, its default and units are documented
// in doc/harmonics.conf.5. Values are stored in SI units: bytes/s and seconds.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "topology/topology.h"
#include "util/host_port.h"  // split_host_port: the address grammar of Schedd=, CoordAddress
#include "util/log.h"

namespace harmonics {

// One `SwitchName=... ` line of harmonics.conf.
struct SwitchConfig {
    std::string name;
    double uplink_Bps = 0;     // 0: derived from Oversubscription
    double downlink_Bps = 0;   // 0: same as the uplink
    std::string schedd;        // "host:port" or "host" of this leaf's harmonics-schedd; "" = none
    int line = 0;              // where it was written, for later errors
};

struct HarmonicsConfig {
    // Where it came from (empty for the built-in defaults).
    std::string path;

    // --- Fabric ---
    std::string topology_file = "/etc/slurm/topology.conf";  // relative: against path's folder
    int topology_file_line = 0;          // line of TopologyFile= (0: the default)
    double node_Bps = 12.5e9;            // NodeBandwidth: NIC of every node (100Gbps)
    double oversubscription = 1.0;       // Oversubscription: derived uplink = children / ratio
    std::vector<SwitchConfig> switches;  // SwitchName lines, in file order

    // --- Local Scheduler (harmonics-schedd, simulator) ---
    std::string policy = "harmonics";    // Policy: fair, harmonics, cassini, crux, optimal
    double epoch_s = 1.0;                // Epoch: period of the scheduling round
    double slot_s = 0.001;               // Slot: resolution of the slot grid
    double change_threshold = 0.02;      // ChangeThreshold: min predicted gain to reshuffle
    double guard = 0.01;                 // Guard: slack of a period over T_j, and between packed bursts
    double local_budget_s = 0.001;       // LocalBudget: per-leaf search time per decision
    double max_stretch = 1.05;           // MaxStretch: bound on P_j / T_j
    double drift_horizon_s = 1.0;        // DriftHorizon: how far ahead plans with periods that drift are judged
    double solver_time_limit_s = 10.0;   // SolverTimeLimit: the optimal policy's CBC limit
    unsigned seed = 1;                   // Seed: policy/simulator random seed
    int sched_port = 6828;               // SchedPort: schedd's default listen port

    // --- Global Coordinator (harmonics-coordd, harmonicsctl) ---
    std::string coord_address = "localhost:6829";              // CoordAddress host:port (schedd -> coordd)
    std::string coord_socket = "/run/harmonics/coordd.sock";   // CoordSocket (prep plugin -> coordd)
    int coord_rounds = 3;                                      // CoordRounds: conflict rounds per decision
    bool free_outrunning = true;                               // FreeOutrunning: a gated job outrunning its period runs free
    bool charge_waits = true;                                  // ChargeWaits: a plan pays its new gates' first waits over the jobs' time left
    bool phase_groups = true;                                  // PhaseGroups: families of cross-leaf jobs placed by coordd
    double admin_comment_interval_s = 10.0;                    // AdminCommentInterval

    // --- job_submit plugin ---
    std::string state_file = "/run/harmonics/leaves.state";    // StateFile: per-leaf summary from coordd
    double state_max_age_s = 60.0;       // StateMaxAge: older state is ignored (fail open)
    double switch_wait_s = 120.0;        // SwitchWait: bounded wait for one leaf (wait4switch)
    bool steering = true;                // Steering: steer placement to less contended leaves

    // --- NCCL hook ---
    bool gate = true;                    // Gate: hold collectives until their slot (no = measure only)
    double gate_cap_s = 0;               // GateCap: longest a collective is held; 0 = one period of the job
    double clock_tolerance_s = 0.001;    // ClockTolerance: assumed clock skew between nodes
    double report_interval_s = 1.0;      // ReportInterval: hook -> schedd measurement reports
    double connect_timeout_s = 2.0;      // ConnectTimeout: any Harmonics connection attempt

    // --- Security, wire, logging ---
    std::string slurm_user = "slurm";    // SlurmUser: trusted besides root (MUNGE uid check)
    std::string munge_socket;            // MungeSocket: "" = MUNGE's default socket
    std::size_t max_frame_bytes = 1u << 20;  // MaxFrameSize: wire frame size limit
    std::string log_file;                // LogFile: "" = stderr, "syslog", or a path
    LogLevel log_level = LogLevel::Info; // LogLevel: error, warning, info, debug

    // The SwitchName line for `name` (names compare exactly, as in Slurm), or null.
    const SwitchConfig* find_switch(const std::string& name) const;
};

// Parse a file / a text. Unknown keys, bad values, duplicates are ConfigErrors
// naming `filename`, the line and the key. A missing file is a ConfigError
// with line 0. A relative TopologyFile is resolved against the folder of
// `path` / `filename`.
HarmonicsConfig parse_harmonics_conf(const std::string& path);
HarmonicsConfig parse_harmonics_conf_text(const std::string& text, const std::string& filename);

// Every global key in its documented spelling, then the SwitchName line's
// keys (SwitchName, Uplink, Downlink, Schedd): for harmonicsctl and for the
// test that the man page documents each one.
std::vector<std::string> harmonics_conf_keys();

// The configuration written back as harmonics.conf text, every key with its
// effective value (defaults included), one per line; parsing it gives the same
// values. For `harmonicsctl config` and daemons' debug logs.
std::string format_harmonics_conf(const HarmonicsConfig& cfg);

// The harmonics.conf to read when none is named: $HARMONICS_CONF if set,
// otherwise /etc/harmonics/harmonics.conf.
std::string default_harmonics_conf_path();

// The fabric: reads cfg.topology_file (Slurm topology.conf), applies
// NodeBandwidth, Oversubscription and the per-switch Uplink/Downlink, checks
// that every SwitchName line of harmonics.conf names a switch of the tree (and
// that Schedd is only given for leaves), and finalizes. Throws ConfigError.
Topology load_topology(const HarmonicsConfig& cfg);
Topology parse_topology_conf(const std::string& path, const HarmonicsConfig& cfg);
Topology parse_topology_conf_text(const std::string& text, const std::string& filename,
                                  const HarmonicsConfig& cfg);

// The leaf switch of a compute node by host name ("n3" or "n3.cluster.local":
// the short name is tried when the full one is unknown); -1 if not in the tree.
SwitchId leaf_of_host(const Topology& topo, const std::string& hostname);

// How long a harmonics-schedd that lost coordd waits at most between two
// attempts to register again (its backoff's cap): coordd, once started,
// hears from every running schedd within this.
inline double coordd_retry_max_s(const HarmonicsConfig& cfg) { return cfg.epoch_s * 5 > 1.0 ? cfg.epoch_s * 5 : 1.0; }

// The "host:port" of the harmonics-schedd serving `leaf`: its Schedd= value
// (a host without a port gets SchedPort), or "" when none is configured.
std::string schedd_address(const HarmonicsConfig& cfg, const Topology& topo, SwitchId leaf);

}  // namespace harmonics
