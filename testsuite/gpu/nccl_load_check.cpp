// nccl-load-check: real NCCL, one rank on GPU 0, with the plugin chosen by
// name (NCCL_PROFILER_PLUGIN=harmonics). A one-rank communicator emits no
// profiler events; what this proves is that NCCL finds, loads and
// initialises the plugin, and that an all-reduce runs with it loaded.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>

int main() {
  int v = 0;
  ncclGetVersion(&v);
  std::printf("NCCL %d\n", v);
  if (cudaSetDevice(0) != cudaSuccess) return 2;
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 2;
  float* buf;
  cudaStream_t s;
  cudaMalloc(&buf, 1 << 20);
  cudaStreamCreate(&s);
  for (int i = 0; i < 10; ++i)
    if (ncclAllReduce(buf, buf, 1 << 18, ncclFloat, ncclSum, comm, s) != ncclSuccess) return 1;
  if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
  ncclCommDestroy(comm);
  std::printf("all-reduce done\n");
  return 0;
}
