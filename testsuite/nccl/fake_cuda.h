// The test's own stand-in for the CUDA driver (libcuda.so.1): enough of the
// driver API for the plugin's cuda gate, recording every kernel launch so the
// harness can check stream, shape and the schedule the kernel would read.
// Device pointers are host pointers (host-mapped memory, as with UVA).
#ifndef HARMONICS_TEST_FAKE_CUDA_H
#define HARMONICS_TEST_FAKE_CUDA_H

struct FakeLaunch {
  void* stream;
  unsigned grid[3];
  unsigned block[3];
  char function[64];
  unsigned long long arg[3];  // the gate kernel's three arguments (64-bit each)
};

extern "C" {
int fake_cuda_launch_count();
int fake_cuda_launch_get(int i, FakeLaunch* out);  // 0 on success
}

#endif
