// Plugin configuration, read once from the environment at the first init.
// Bad values never fail NCCL: they are named in one log line and the default
// is used (plugins fail open).
#ifndef HARMONICS_NCCL_CONFIG_H
#define HARMONICS_NCCL_CONFIG_H

#include <cstdint>
#include <string>
#include <vector>

namespace hnccl {

enum class GateMode { Auto, Cuda, Host, Off };

struct Config {
  std::string job_id;        // SLURM_JOB_ID; empty: measure and trace, never gate
  std::string schedd_host;   // HARMONICS_SCHEDD=host:port, else harmonics.conf
  uint16_t schedd_port = 0;
  std::string schedd_source; // where the address came from, for the log
  std::string munge_socket;  // HARMONICS_MUNGE_SOCKET, else MungeSocket; "" = MUNGE's default
  GateMode gate = GateMode::Auto;     // HARMONICS_GATE
  std::string trace_path;             // HARMONICS_TRACE
  uint64_t gate_cap_ns = 0;           // HARMONICS_GATE_CAP_US; 0: one period
  uint64_t gate_tolerance_ns = 50000; // HARMONICS_GATE_TOLERANCE_US
  uint64_t burst_gap_ns = 2000000;    // HARMONICS_BURST_GAP_US
  uint64_t report_interval_ns = 200000000;  // HARMONICS_REPORT_MS
  uint64_t schedd_timeout_ns = 5000000000;  // HARMONICS_SCHEDD_TIMEOUT_MS: ungated after
  uint64_t expire_ns = 10000000000;         // HARMONICS_EXPIRE_MS: records without kernel stops dropped
};

// Reads the environment; problems are appended to `warnings` (one line each).
Config read_config(std::vector<std::string>* warnings);

const char* gate_mode_name(GateMode m);

}  // namespace hnccl

#endif
