// Loads a profiler plugin exactly as NCCL 2.28 does: NCCL_PROFILER_PLUGIN
// names it (unset: libnccl-profiler.so; "none": disabled); NCCL first tries
// dlopen(name) as given, then, for a bare name (no '/', no "lib" prefix, no
// ".so" suffix), libnccl-profiler-<name>.so; RTLD_NOW | RTLD_LOCAL; the
// symbol ncclProfiler_v5 is the function table itself.
#ifndef HARMONICS_TEST_NCCL_PLUGIN_LOADER_H
#define HARMONICS_TEST_NCCL_PLUGIN_LOADER_H

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "plugins/nccl/profiler_v5.h"

namespace ncclsim {

struct Loaded {
  void* lib = nullptr;
  ProfilerV5* table = nullptr;
  std::string opened;  // the name dlopen succeeded with
  std::string error;
};

inline bool ends_with(const std::string& s, const char* suf) {
  const size_t n = std::strlen(suf);
  return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

inline Loaded load_profiler(const char* env_value) {
  Loaded r;
  std::string name = env_value ? env_value : "libnccl-profiler.so";
  if (name == "none") {
    r.error = "disabled";
    return r;
  }
  r.lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (r.lib == nullptr && name.find('/') == std::string::npos && name.compare(0, 3, "lib") != 0 &&
      !ends_with(name, ".so")) {
    name = "libnccl-profiler-" + name + ".so";
    r.lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (r.lib == nullptr) {
    const char* e = dlerror();
    r.error = e ? e : "dlopen failed";
    return r;
  }
  r.opened = name;
  r.table = static_cast<ProfilerV5*>(dlsym(r.lib, "ncclProfiler_v5"));
  if (r.table == nullptr) r.error = "no ncclProfiler_v5 symbol";
  return r;
}

}  // namespace ncclsim

#endif
