// A finished collective as it leaves NCCL's threads: a plain copyable record
// (it travels through the lock-free queue to the reporting thread). The same
// record feeds the trace, the rhythm estimate and the reports.
#ifndef HARMONICS_NCCL_COMPLETED_H
#define HARMONICS_NCCL_COMPLETED_H

#include <cstdint>

namespace hnccl {

struct Completed {
  uint64_t comm_id = 0;
  int32_t rank = 0;
  int32_t n_nodes = 0;
  uint64_t seq = 0;
  uint8_t func = 0;
  uint64_t bytes = 0;       // count × datatype size (AllGather: one rank's send buffer)
  uint64_t edge_bytes = 0;  // bytes per ring edge: what the rhythm and the reports carry
  uint64_t enqueue_ns = 0;
  uint64_t gpu_start_ns = 0;  // host clock; 0 if no kernel timer arrived
  uint64_t gpu_end_ns = 0;
  uint64_t gated_ns = 0;
  int32_t gate_slot = -1;     // cuda gate result still to be read, or -1
};

}  // namespace hnccl

#endif
