// The cuda gate's host side: the CUDA driver opened with dlopen at run time
// (the plugin loads and measures on hosts without a GPU or driver), the gate
// kernel's module loaded once per CUDA context from the embedded fatbin, and
// one process-wide host-mapped HarmonicsGateBlock that is never freed (kernels
// still queued may read it at any time).
#ifndef HARMONICS_NCCL_CUDA_GATE_H
#define HARMONICS_NCCL_CUDA_GATE_H

#include <cstdint>
#include <string>

#include "gate_abi.h"
#include "schedule.h"

namespace hnccl {

// Per communicator: what a launch needs, resolved in init (never during capture).
struct CudaGateCtx {
  void* context = nullptr;    // CUcontext current at init (the communicator's device)
  void* function = nullptr;   // CUfunction
  uint64_t block_dev = 0;     // device address of the HarmonicsGateBlock
  uint32_t memory = 0;        // its slot in the block's last_late (the release rule's memory)
};

// Loads libcuda.so.1, checks for a device, loads the kernel in the current
// context. False with *why set when the cuda gate cannot be used here.
bool cuda_gate_prepare(CudaGateCtx* ctx, std::string* why);

// Enqueue the gate on `stream`; result slot `slot` receives the hold time.
bool cuda_gate_launch(const CudaGateCtx& ctx, void* stream, uint32_t slot, std::string* why);

// Host-side view of the mapped block (nullptr until a prepare succeeded).
HarmonicsGateBlock* cuda_gate_block();

// Publish the release rule (host clock: schedule.h's gate_rule) to running
// and future gate kernels; `offset_ns` is host - GPU clock. A period of 0
// makes every gate pass at once.
void cuda_gate_publish(const HarmonicsGateRule& rule, int64_t offset_ns);

// Hold time the kernel recorded in `slot` (0 if it did not run yet).
uint64_t cuda_gate_held_ns(uint32_t slot);

// The embedded fatbin (gate_fatbin.cpp, generated; empty without nvcc).
extern const unsigned char harmonics_gate_fatbin[];
extern const unsigned long harmonics_gate_fatbin_size;

}  // namespace hnccl

#endif
