#include "schedd_address.h"

#include <unistd.h>

#include <cstdlib>
#include <exception>

#include "config/harmonics_conf.h"
#include "util/host_port.h"

namespace hnccl {

bool parse_host_port(const std::string& s, std::string* host, uint16_t* port, std::string* err) {
  int p = 0;
  std::string why;
  if (!harmonics::split_host_port(s, host, &p, &why)) {
    *err = why + " (expected host:port)";
    return false;
  }
  *port = uint16_t(p);
  return true;
}

std::string node_name() {
  const char* n = std::getenv("SLURMD_NODENAME");
  if (n != nullptr && *n != '\0') return n;
  char h[256] = {0};
  if (gethostname(h, sizeof h - 1) != 0) return "";
  return h;
}

bool read_conf_hook(const std::string& path, ConfHook* out, std::string* err) {
  try {
    const harmonics::HarmonicsConfig cfg = harmonics::parse_harmonics_conf(path);
    out->munge_socket = cfg.munge_socket;
    out->gate = cfg.gate;
    out->gate_cap_s = cfg.gate_cap_s;
    out->clock_tolerance_s = cfg.clock_tolerance_s;
    out->report_interval_s = cfg.report_interval_s;
    const harmonics::Topology topo = harmonics::load_topology(cfg);
    const std::string name = node_name();
    if (name.empty()) return *err = path + ": cannot read this host's name", true;
    const auto leaf = harmonics::leaf_of_host(topo, name);
    if (leaf < 0) return *err = path + ": node " + name + " is under no leaf switch of the topology", true;
    const std::string addr = harmonics::schedd_address(cfg, topo, leaf);
    if (addr.empty()) return *err = path + ": no Schedd= for the leaf of node " + name, true;
    if (!parse_host_port(addr, &out->schedd_host, &out->schedd_port, err)) {
      out->schedd_host.clear();
      *err = path + ": Schedd=" + addr + ": " + *err;
    }
    return true;
  } catch (const std::exception& e) {
    *err = e.what();
  } catch (...) {
    *err = path + ": unreadable";
  }
  return false;
}

}  // namespace hnccl
