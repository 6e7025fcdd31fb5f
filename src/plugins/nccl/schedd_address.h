// Where this node's harmonics-schedd listens: "host:port" strings, or the
// Schedd address of this node's leaf switch in harmonics.conf.
#ifndef HARMONICS_NCCL_SCHEDD_ADDRESS_H
#define HARMONICS_NCCL_SCHEDD_ADDRESS_H

#include <cstdint>
#include <string>

namespace hnccl {

constexpr const char* kDefaultConfPath = "/etc/harmonics/harmonics.conf";

// "host:port" or "[v6addr]:port"; err says what is wrong.
bool parse_host_port(const std::string& s, std::string* host, uint16_t* port, std::string* err);

// This node's name as Slurm and topology.conf know it: SLURMD_NODENAME (set
// by slurmd in every job step), else the host name.
std::string node_name();

// What harmonics.conf says for this node's hook.
struct ConfHook {
  std::string schedd_host;  // empty: this node's leaf has no Schedd=
  uint16_t schedd_port = 0;
  std::string munge_socket;
  bool gate = true;
  double gate_cap_s = 0;
  double clock_tolerance_s = 0;
  double report_interval_s = 0;
};

// Reads the configuration at path and looks up this node (node_name(); the
// short name is tried too) to find its leaf's Schedd address. False with err
// naming the file, line and key when the file is unreadable or invalid; a node
// outside the topology is not an error (no Schedd, err says why).
bool read_conf_hook(const std::string& path, ConfHook* out, std::string* err);

}  // namespace hnccl

#endif
