// Logging through NCCL's own logger (so lines land where NCCL_DEBUG sends
// them). Failures are logged once per kind: a broken piece must not flood
// the training job's output once per collective.
#ifndef HARMONICS_NCCL_LOG_H
#define HARMONICS_NCCL_LOG_H

#include "profiler_v5.h"

namespace hnccl {

enum class Once : unsigned {
  PoolFull = 0, QueueFull, Internal, Cuda, CudaLaunch, Schedd, ScheddData, Trace, Config, Comms, Opening,
  Count
};

void log_set_logger(ProfLoggerV5 logger);
// After the last communicator is gone NCCL may be tearing down: stay silent
// (background threads keep running until the process exits).
void log_silence();
// printf-style line "harmonics: ..." at INFO (warn=false) or WARN level.
void log_line(bool warn, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The same, but only the first time for this kind.
void log_once(Once kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace hnccl

#endif
