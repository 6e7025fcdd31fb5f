// Fake libcuda.so.1 (see fake_cuda.h). FAKE_CUDA_DEVICES sets the device
// count cuDeviceGetCount reports (default 1; 0 = a driver without devices).
#include "fake_cuda.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kNoDevice = 100, kInvalidImage = 200, kNotFound = 500;
constexpr uint32_t kFatbinMagic = 0xBA55ED50u;

std::mutex g_mu;
std::vector<FakeLaunch> g_launches;
bool g_init = false;

struct Module {
  const unsigned char* image;
  size_t size;
};
struct Function {
  char name[64];
};

// Everything handed out stays owned here, like a driver's own allocations;
// never destroyed, so it is still reachable when LeakSanitizer looks at exit.
std::vector<void*>* g_owned = new std::vector<void*>;

template <typename T>
T* owned(T* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_owned->push_back(p);
  return p;
}

int device_count() {
  const char* v = std::getenv("FAKE_CUDA_DEVICES");
  return v ? std::atoi(v) : 1;
}

// One context per thread, like the driver's; FAKE_CUDA_SECOND_CONTEXT makes
// threads other than the first start in another context, and launches must
// then come with the first one pushed (cuLaunchKernel checks).
int g_contexts[2];
thread_local void* t_current = nullptr;
std::atomic<int> g_threads{0};

void* current() {
  if (t_current == nullptr) {
    const bool other = std::getenv("FAKE_CUDA_SECOND_CONTEXT") != nullptr && g_threads.fetch_add(1) > 0;
    t_current = &g_contexts[other ? 1 : 0];
  }
  return t_current;
}

thread_local void* t_saved = nullptr;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned flags) {
  if (flags != 0) return kInvalidValue;
  g_init = true;
  return device_count() > 0 ? kSuccess : kNoDevice;
}

__attribute__((visibility("default"))) int cuDeviceGetCount(int* n) {
  if (!g_init) return 3;  // CUDA_ERROR_NOT_INITIALIZED
  *n = device_count();
  return kSuccess;
}

__attribute__((visibility("default"))) int cuCtxGetCurrent(void** ctx) {
  *ctx = current();
  return kSuccess;
}

__attribute__((visibility("default"))) int cuCtxPushCurrent_v2(void* ctx) {
  t_saved = current();
  t_current = ctx;
  return kSuccess;
}

__attribute__((visibility("default"))) int cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = t_current;
  t_current = t_saved;
  return kSuccess;
}

// Accepts only a real fatbin: magic, header size and payload size as nvcc writes them.
__attribute__((visibility("default"))) int cuModuleLoadData(void** mod, const void* image) {
  const unsigned char* p = static_cast<const unsigned char*>(image);
  uint32_t magic;
  uint16_t header;
  uint64_t payload;
  std::memcpy(&magic, p, 4);
  std::memcpy(&header, p + 6, 2);
  std::memcpy(&payload, p + 8, 8);
  if (magic != kFatbinMagic || header < 16 || payload == 0 || payload > (64u << 20)) return kInvalidImage;
  *mod = owned(new Module{p, size_t(header) + size_t(payload)});
  return kSuccess;
}

// The function must be named in the image (kernel names are stored in clear).
__attribute__((visibility("default"))) int cuModuleGetFunction(void** fn, void* mod, const char* name) {
  const Module* m = static_cast<const Module*>(mod);
  if (m == nullptr || name == nullptr || std::strlen(name) >= 64) return kInvalidValue;
  if (memmem(m->image, m->size, name, std::strlen(name)) == nullptr) return kNotFound;
  auto* f = owned(new Function{});
  std::strcpy(f->name, name);
  *fn = f;
  return kSuccess;
}

__attribute__((visibility("default"))) int cuMemHostAlloc(void** p, size_t size, unsigned flags) {
  if ((flags & 0x2u) == 0) return kInvalidValue;  // must be device-mapped
  *p = owned(std::aligned_alloc(4096, (size + 4095) / 4096 * 4096));
  return *p ? kSuccess : 2;
}

__attribute__((visibility("default"))) int cuMemHostGetDevicePointer_v2(unsigned long long* d, void* p, unsigned flags) {
  if (flags != 0) return kInvalidValue;
  *d = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}

__attribute__((visibility("default"))) int cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                          unsigned by, unsigned bz, unsigned shmem, void* stream,
                                                          void** params, void** extra) {
  if (fn == nullptr || params == nullptr || extra != nullptr || shmem != 0) return kInvalidValue;
  if (current() != &g_contexts[0]) return 201;  // CUDA_ERROR_INVALID_CONTEXT: wrong context current
  FakeLaunch l{};
  l.stream = stream;
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  std::strcpy(l.function, static_cast<Function*>(fn)->name);
  std::memcpy(&l.arg[0], params[0], 8);
  std::memcpy(&l.arg[1], params[1], 8);
  std::memcpy(&l.arg[2], params[2], 8);
  std::lock_guard<std::mutex> lock(g_mu);
  g_launches.push_back(l);
  return kSuccess;
}

__attribute__((visibility("default"))) int fake_cuda_launch_count() {
  std::lock_guard<std::mutex> lock(g_mu);
  return int(g_launches.size());
}

__attribute__((visibility("default"))) int fake_cuda_launch_get(int i, FakeLaunch* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (i < 0 || size_t(i) >= g_launches.size()) return 1;
  *out = g_launches[size_t(i)];
  return 0;
}

}  // extern "C"
