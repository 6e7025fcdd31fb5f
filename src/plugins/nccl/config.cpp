#include "config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "schedd_address.h"

namespace hnccl {

namespace {

const char* env(const char* key) {
  const char* v = std::getenv(key);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// Unsigned integer in `unit` ns; keeps `*out` and warns on a bad value.
void read_duration(const char* key, uint64_t unit, uint64_t* out, std::vector<std::string>* w) {
  const char* v = env(key);
  if (v == nullptr) return;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || v[0] == '-') {
    w->push_back(std::string(key) + "=" + v + ": not a non-negative integer, using the default");
    return;
  }
  *out = uint64_t(x) * unit;
}

}  // namespace

const char* gate_mode_name(GateMode m) {
  switch (m) {
    case GateMode::Auto: return "auto";
    case GateMode::Cuda: return "cuda";
    case GateMode::Host: return "host";
    case GateMode::Off: return "off";
  }
  return "?";
}

Config read_config(std::vector<std::string>* w) {
  Config c;
  if (const char* j = env("SLURM_JOB_ID")) c.job_id = j;
  if (const char* t = env("HARMONICS_TRACE")) c.trace_path = t;
  if (const char* g = env("HARMONICS_GATE")) {
    if (std::strcmp(g, "auto") == 0) c.gate = GateMode::Auto;
    else if (std::strcmp(g, "cuda") == 0) c.gate = GateMode::Cuda;
    else if (std::strcmp(g, "host") == 0) c.gate = GateMode::Host;
    else if (std::strcmp(g, "off") == 0) c.gate = GateMode::Off;
    else w->push_back(std::string("HARMONICS_GATE=") + g + ": expected auto|cuda|host|off, using auto");
  }

  // harmonics.conf first (it may say Gate=no, GateCap, ...), the
  // environment on top. A missing default file is normal outside a cluster.
  const char* conf = env("HARMONICS_CONF");
  const std::string path = conf != nullptr ? conf : kDefaultConfPath;
  ConfHook h;
  std::string err;
  if (conf != nullptr || access(path.c_str(), F_OK) == 0) {
    if (!read_conf_hook(path, &h, &err)) {
      w->push_back(err + " (harmonics.conf ignored)");
    } else {
      if (!h.schedd_host.empty()) {
        c.schedd_host = h.schedd_host;
        c.schedd_port = h.schedd_port;
        c.schedd_source = path;
      } else if (env("HARMONICS_SCHEDD") == nullptr) {
        w->push_back(err);
      }
      c.munge_socket = h.munge_socket;
      if (!h.gate && env("HARMONICS_GATE") == nullptr) c.gate = GateMode::Off;
      if (h.gate_cap_s > 0) c.gate_cap_ns = uint64_t(h.gate_cap_s * 1e9);
      if (h.clock_tolerance_s > 0) c.gate_tolerance_ns = uint64_t(h.clock_tolerance_s * 1e9);
      if (h.report_interval_s > 0) c.report_interval_ns = uint64_t(h.report_interval_s * 1e9);
    }
  }
  if (const char* s = env("HARMONICS_SCHEDD")) {
    if (parse_host_port(s, &c.schedd_host, &c.schedd_port, &err))
      c.schedd_source = "HARMONICS_SCHEDD";
    else
      w->push_back(std::string("HARMONICS_SCHEDD=") + s + ": " + err);
  }
  read_duration("HARMONICS_GATE_CAP_US", 1000, &c.gate_cap_ns, w);
  read_duration("HARMONICS_GATE_TOLERANCE_US", 1000, &c.gate_tolerance_ns, w);
  read_duration("HARMONICS_BURST_GAP_US", 1000, &c.burst_gap_ns, w);
  read_duration("HARMONICS_REPORT_MS", 1000000, &c.report_interval_ns, w);
  read_duration("HARMONICS_SCHEDD_TIMEOUT_MS", 1000000, &c.schedd_timeout_ns, w);
  read_duration("HARMONICS_EXPIRE_MS", 1000000, &c.expire_ns, w);
  if (c.report_interval_ns < 1000000) c.report_interval_ns = 1000000;
  if (const char* m = env("HARMONICS_MUNGE_SOCKET")) c.munge_socket = m;
  return c;
}

}  // namespace hnccl
