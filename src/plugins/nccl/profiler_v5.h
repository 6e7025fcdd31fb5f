// NCCL profiler plugin interface, version 5 (NCCL 2.28), written from the
// facts in shared/notes/nccl-profiler-v5.md. The layout is NCCL's, the names
// are ours; every byte offset NCCL relies on is pinned by a static_assert so a
// mistake fails the build instead of corrupting events at run time.
#ifndef HARMONICS_NCCL_PROFILER_V5_H
#define HARMONICS_NCCL_PROFILER_V5_H

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

extern "C" {

// Event type bits (descr.type and the activation mask).
enum : uint64_t {
  kEvGroup = 1u << 0,
  kEvColl = 1u << 1,
  kEvP2p = 1u << 2,
  kEvProxyOp = 1u << 3,
  kEvProxyStep = 1u << 4,
  kEvProxyCtrl = 1u << 5,
  kEvKernelCh = 1u << 6,
  kEvNetPlugin = 1u << 7,
  kEvGroupApi = 1u << 8,
  kEvCollApi = 1u << 9,
  kEvP2pApi = 1u << 10,
  kEvKernelLaunch = 1u << 11,
};

// recordEventState states we look at (the others are accepted and ignored).
enum : int {
  kStateProxyStepSendWait = 9,
  kStateProxyStepRecvFlushWait = 11,
  kStateKernelChStop = 22,
};

struct ProfGroupApiV5 {
  bool graphCaptured;
  int groupDepth;
};

struct ProfCollApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;  // the user's cudaStream_t (== CUstream)
  bool graphCaptured;
};

struct ProfP2pApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};

struct ProfKernelLaunchV5 {
  void* stream;
};

struct ProfCollV5 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};

struct ProfP2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};

struct ProfProxyOpV5 {
  pid_t pid;
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};

struct ProfProxyStepV5 {
  int step;
};

struct ProfKernelChV5 {
  uint8_t channelId;
  uint64_t pTimer;  // GPU %globaltimer, ns
};

struct ProfNetPluginV5 {
  int64_t id;
  void* data;
};

struct ProfEventDescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    ProfGroupApiV5 groupApi;
    ProfCollApiV5 collApi;
    ProfP2pApiV5 p2pApi;
    ProfKernelLaunchV5 kernelLaunch;
    ProfCollV5 coll;
    ProfP2pV5 p2p;
    ProfProxyOpV5 proxyOp;
    ProfProxyStepV5 proxyStep;
    ProfKernelChV5 kernelCh;
    ProfNetPluginV5 netPlugin;
  };
};

union ProfStateArgsV5 {
  struct { size_t transSize; } proxyStep;
  struct { int appendedProxyOps; } proxyCtrl;
  struct { void* data; } netPlugin;
  struct { uint64_t pTimer; } kernelCh;
};

typedef void (*ProfLoggerV5)(int level, unsigned long flags, const char* file,
                             int line, const char* fmt, ...);

// The exported symbol ncclProfiler_v5 is an object of this type.
struct ProfilerV5 {
  const char* name;
  int (*init)(void** ctx, uint64_t commId, int* eActivationMask,
              const char* commName, int nNodes, int nranks, int rank,
              ProfLoggerV5 logger);
  int (*startEvent)(void* ctx, void** eHandle, ProfEventDescrV5* descr);
  int (*stopEvent)(void* eHandle);
  int (*recordEventState)(void* eHandle, int state, ProfStateArgsV5* args);
  int (*finalize)(void* ctx);
};

}  // extern "C"

// NCCL's logger levels (ncclDebugLogLevel): WARN is 2, INFO 3.
constexpr int kNcclLogWarn = 2;
constexpr int kNcclLogInfo = 3;
constexpr unsigned long kNcclLogAll = ~0ul;

#define HX_OFF(part, field) offsetof(ProfEventDescrV5, part.field)
static_assert(sizeof(void*) == 8, "NCCL profiler ABI assumed LP64");
static_assert(sizeof(ProfEventDescrV5) == 112, "descriptor size");
static_assert(offsetof(ProfEventDescrV5, type) == 0, "type");
static_assert(offsetof(ProfEventDescrV5, parentObj) == 8, "parentObj");
static_assert(offsetof(ProfEventDescrV5, rank) == 16, "rank");
static_assert(HX_OFF(groupApi, graphCaptured) == 24, "groupApi.graphCaptured");
static_assert(HX_OFF(groupApi, groupDepth) == 28, "groupApi.groupDepth");
static_assert(HX_OFF(collApi, func) == 24, "collApi.func");
static_assert(HX_OFF(collApi, count) == 32, "collApi.count");
static_assert(HX_OFF(collApi, datatype) == 40, "collApi.datatype");
static_assert(HX_OFF(collApi, root) == 48, "collApi.root");
static_assert(HX_OFF(collApi, stream) == 56, "collApi.stream");
static_assert(HX_OFF(collApi, graphCaptured) == 64, "collApi.graphCaptured");
static_assert(HX_OFF(p2pApi, func) == 24, "p2pApi.func");
static_assert(HX_OFF(p2pApi, count) == 32, "p2pApi.count");
static_assert(HX_OFF(p2pApi, datatype) == 40, "p2pApi.datatype");
static_assert(HX_OFF(p2pApi, stream) == 48, "p2pApi.stream");
static_assert(HX_OFF(p2pApi, graphCaptured) == 56, "p2pApi.graphCaptured");
static_assert(HX_OFF(kernelLaunch, stream) == 24, "kernelLaunch.stream");
static_assert(HX_OFF(coll, seqNumber) == 24, "coll.seqNumber");
static_assert(HX_OFF(coll, func) == 32, "coll.func");
static_assert(HX_OFF(coll, sendBuff) == 40, "coll.sendBuff");
static_assert(HX_OFF(coll, recvBuff) == 48, "coll.recvBuff");
static_assert(HX_OFF(coll, count) == 56, "coll.count");
static_assert(HX_OFF(coll, root) == 64, "coll.root");
static_assert(HX_OFF(coll, datatype) == 72, "coll.datatype");
static_assert(HX_OFF(coll, nChannels) == 80, "coll.nChannels");
static_assert(HX_OFF(coll, nWarps) == 81, "coll.nWarps");
static_assert(HX_OFF(coll, algo) == 88, "coll.algo");
static_assert(HX_OFF(coll, proto) == 96, "coll.proto");
static_assert(HX_OFF(coll, parentGroup) == 104, "coll.parentGroup");
static_assert(HX_OFF(p2p, func) == 24, "p2p.func");
static_assert(HX_OFF(p2p, buff) == 32, "p2p.buff");
static_assert(HX_OFF(p2p, datatype) == 40, "p2p.datatype");
static_assert(HX_OFF(p2p, count) == 48, "p2p.count");
static_assert(HX_OFF(p2p, peer) == 56, "p2p.peer");
static_assert(HX_OFF(p2p, nChannels) == 60, "p2p.nChannels");
static_assert(HX_OFF(p2p, parentGroup) == 64, "p2p.parentGroup");
static_assert(HX_OFF(proxyOp, pid) == 24, "proxyOp.pid");
static_assert(HX_OFF(proxyOp, channelId) == 28, "proxyOp.channelId");
static_assert(HX_OFF(proxyOp, peer) == 32, "proxyOp.peer");
static_assert(HX_OFF(proxyOp, nSteps) == 36, "proxyOp.nSteps");
static_assert(HX_OFF(proxyOp, chunkSize) == 40, "proxyOp.chunkSize");
static_assert(HX_OFF(proxyOp, isSend) == 44, "proxyOp.isSend");
static_assert(HX_OFF(proxyStep, step) == 24, "proxyStep.step");
static_assert(HX_OFF(kernelCh, channelId) == 24, "kernelCh.channelId");
static_assert(HX_OFF(kernelCh, pTimer) == 32, "kernelCh.pTimer");
static_assert(HX_OFF(netPlugin, id) == 24, "netPlugin.id");
static_assert(HX_OFF(netPlugin, data) == 32, "netPlugin.data");
static_assert(sizeof(ProfStateArgsV5) == 8, "state args union");
static_assert(sizeof(ProfilerV5) == 48, "function table: 6 pointers");
static_assert(offsetof(ProfilerV5, name) == 0, "table.name");
static_assert(offsetof(ProfilerV5, init) == 8, "table.init");
static_assert(offsetof(ProfilerV5, startEvent) == 16, "table.startEvent");
static_assert(offsetof(ProfilerV5, stopEvent) == 24, "table.stopEvent");
static_assert(offsetof(ProfilerV5, recordEventState) == 32, "table.recordEventState");
static_assert(offsetof(ProfilerV5, finalize) == 40, "table.finalize");
#undef HX_OFF

#endif
