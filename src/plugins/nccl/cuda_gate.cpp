#include "cuda_gate.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace hnccl {

namespace {

// The few driver API entry points we use, declared here so that the plugin
// builds without CUDA headers. CUresult 0 is CUDA_SUCCESS.
using CUresult = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;
constexpr unsigned kHostAllocPortable = 0x01;
constexpr unsigned kHostAllocDeviceMap = 0x02;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext*);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
  CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr*, void*, unsigned);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, void*, void**, void**);
};

// Modules are cached per context: a process with several communicators on
// one GPU loads the kernel once. Touched only from init (mutex is fine there).
struct ContextEntry {
  CUcontext ctx;
  CUfunction fn;
  CUdeviceptr block_dev;
};
constexpr int kMaxContexts = 64;

std::mutex g_mu;
Driver g_drv;
bool g_loaded = false;
std::string g_load_error;
HarmonicsGateBlock* g_block = nullptr;
std::atomic<HarmonicsGateBlock*> g_block_pub{nullptr};
ContextEntry g_ctx[kMaxContexts];
int g_nctx = 0;
uint32_t g_comms = 0;  // communicators prepared: each gets a memory slot for the release rule

template <typename F>
bool sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

bool load_driver(std::string* why) {
  if (g_loaded) return true;
  if (!g_load_error.empty()) return *why = g_load_error, false;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    g_load_error = std::string("cannot open libcuda.so.1: ") + (e ? e : "?");
    return *why = g_load_error, false;
  }
  Driver d{};
  if (!sym(lib, "cuInit", &d.cuInit) || !sym(lib, "cuDeviceGetCount", &d.cuDeviceGetCount) ||
      !sym(lib, "cuCtxGetCurrent", &d.cuCtxGetCurrent) ||
      !sym(lib, "cuCtxPushCurrent_v2", &d.cuCtxPushCurrent) ||
      !sym(lib, "cuCtxPopCurrent_v2", &d.cuCtxPopCurrent) ||
      !sym(lib, "cuModuleLoadData", &d.cuModuleLoadData) ||
      !sym(lib, "cuModuleGetFunction", &d.cuModuleGetFunction) ||
      !sym(lib, "cuMemHostAlloc", &d.cuMemHostAlloc) ||
      !sym(lib, "cuMemHostGetDevicePointer_v2", &d.cuMemHostGetDevicePointer) ||
      !sym(lib, "cuLaunchKernel", &d.cuLaunchKernel)) {
    g_load_error = "libcuda.so.1 lacks a driver API entry point";
    return *why = g_load_error, false;
  }
  int n = 0;
  CUresult rc = d.cuInit(0);
  if (rc == 0) rc = d.cuDeviceGetCount(&n);
  if (rc != 0 || n <= 0) {
    g_load_error = "no CUDA device (cuInit/cuDeviceGetCount error " + std::to_string(rc) + ")";
    return *why = g_load_error, false;
  }
  g_drv = d;
  g_loaded = true;
  return true;
}

}  // namespace

bool cuda_gate_prepare(CudaGateCtx* out, std::string* why) {
  if (harmonics_gate_fatbin_size == 0) return *why = "built without nvcc: no gate kernel", false;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!load_driver(why)) return false;
  CUcontext ctx = nullptr;
  if (g_drv.cuCtxGetCurrent(&ctx) != 0 || ctx == nullptr)
    return *why = "no current CUDA context in init", false;
  for (int i = 0; i < g_nctx; ++i)
    if (g_ctx[i].ctx == ctx) {
      out->context = ctx;
      out->function = g_ctx[i].fn;
      out->block_dev = g_ctx[i].block_dev;
      out->memory = g_comms++ % HARMONICS_GATE_COMMS;
      return true;
    }
  if (g_nctx == kMaxContexts) return *why = "too many CUDA contexts", false;
  if (g_block == nullptr) {
    void* p = nullptr;
    if (g_drv.cuMemHostAlloc(&p, sizeof(HarmonicsGateBlock), kHostAllocPortable | kHostAllocDeviceMap) != 0 ||
        p == nullptr)
      return *why = "cuMemHostAlloc of the gate schedule failed", false;
    std::memset(p, 0, sizeof(HarmonicsGateBlock));
    g_block = static_cast<HarmonicsGateBlock*>(p);
    g_block_pub.store(g_block, std::memory_order_release);
  }
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  CUdeviceptr dev = 0;
  CUresult rc = g_drv.cuModuleLoadData(&mod, harmonics_gate_fatbin);
  if (rc != 0) return *why = "cuModuleLoadData of the gate fatbin failed: " + std::to_string(rc), false;
  rc = g_drv.cuModuleGetFunction(&fn, mod, HARMONICS_GATE_KERNEL);
  if (rc != 0) return *why = "gate kernel not found in its module: " + std::to_string(rc), false;
  rc = g_drv.cuMemHostGetDevicePointer(&dev, g_block, 0);
  if (rc != 0) return *why = "cuMemHostGetDevicePointer failed: " + std::to_string(rc), false;
  g_ctx[g_nctx++] = ContextEntry{ctx, fn, dev};
  out->context = ctx;
  out->function = fn;
  out->block_dev = dev;
  out->memory = g_comms++ % HARMONICS_GATE_COMMS;
  return true;
}

bool cuda_gate_launch(const CudaGateCtx& ctx, void* stream, uint32_t slot, std::string* why) {
  HarmonicsGateBlock* b = g_block_pub.load(std::memory_order_acquire);
  if (b == nullptr || ctx.function == nullptr) return *why = "gate not prepared", false;
  slot %= HARMONICS_GATE_RESULTS;
  __atomic_store_n(&b->held[slot], 0ull, __ATOMIC_RELAXED);
  unsigned long long sched = ctx.block_dev + offsetof(HarmonicsGateBlock, schedule);
  unsigned long long held = ctx.block_dev + offsetof(HarmonicsGateBlock, held) + slot * sizeof(unsigned long long);
  unsigned long long memory = ctx.block_dev + offsetof(HarmonicsGateBlock, last_late) +
                              ctx.memory * sizeof(unsigned long long);
  void* args[] = {&sched, &held, &memory};
  // The caller's thread may have another device current (a process driving
  // several GPUs): launch in the communicator's context.
  CUcontext cur = nullptr;
  const bool switched = g_drv.cuCtxGetCurrent(&cur) == 0 && cur != ctx.context &&
                        g_drv.cuCtxPushCurrent(ctx.context) == 0;
  const CUresult rc = g_drv.cuLaunchKernel(ctx.function, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr);
  if (switched) g_drv.cuCtxPopCurrent(&cur);
  if (rc != 0) return *why = "cuLaunchKernel of the gate failed: " + std::to_string(rc), false;
  return true;
}

HarmonicsGateBlock* cuda_gate_block() { return g_block_pub.load(std::memory_order_acquire); }

void cuda_gate_publish(const HarmonicsGateRule& r, int64_t offset_ns) {
  HarmonicsGateBlock* b = g_block_pub.load(std::memory_order_acquire);
  if (b == nullptr) return;
  HarmonicsGateSchedule& g = b->schedule;
  const unsigned long long first = r.first_slot_ns - uint64_t(offset_ns);
  const unsigned long long enabled = r.period_ns > 0 ? 1 : 0;
  const unsigned long long fields[] = {first,     r.period_ns, r.cap_ns,   r.tolerance_ns,
                                      r.late_ns, r.share_ns,  r.noise_ns, enabled};
  unsigned long long* dest[] = {&g.first_slot_ns, &g.period_ns, &g.cap_ns,   &g.tolerance_ns,
                                &g.late_ns,       &g.share_ns,  &g.noise_ns, &g.enabled};
  // Skip identical rewrites: the kernel re-aims whenever seq moves.
  bool same = true;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
    same = same && __atomic_load_n(dest[i], __ATOMIC_RELAXED) == fields[i];
  if (same) return;
  const unsigned long long q = __atomic_load_n(&g.seq, __ATOMIC_RELAXED);
  // x86 keeps stores in order, also as seen over PCIe by the GPU; release
  // stores keep the compiler from reordering them.
  __atomic_store_n(&g.seq, q + 1, __ATOMIC_RELAXED);
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) __atomic_store_n(dest[i], fields[i], __ATOMIC_RELEASE);
  __atomic_store_n(&g.seq, q + 2, __ATOMIC_RELEASE);
}

uint64_t cuda_gate_held_ns(uint32_t slot) {
  HarmonicsGateBlock* b = g_block_pub.load(std::memory_order_acquire);
  if (b == nullptr) return 0;
  const unsigned long long v = __atomic_load_n(&b->held[slot % HARMONICS_GATE_RESULTS], __ATOMIC_ACQUIRE);
  return v == 0 ? 0 : v - 1;
}

}  // namespace hnccl
