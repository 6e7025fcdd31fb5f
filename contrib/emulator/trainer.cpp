// harmonics-trainer: one rank of an EMULATED training job. Launched by
// sbatch/srun like a real trainer; it loads libnccl-profiler-harmonics.so the
// way NCCL does and drives its callbacks around every all-reduce exactly as
// NCCL would (CollApi on the user thread, Coll, KernelCh start/stop with
// timestamps), so the plugin's measurement, reporting, schedule and host gate
// all run for real. Compute phases follow a model profile; collectives are
// timed by harmonics-fabric, the emulated fabric. Periods are scaled by
// --time-scale so two cores keep up.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "config/harmonics_conf.h"
#include "model/model_library.h"
#include "plugins/nccl/profiler_v5.h"

using namespace harmonics;

namespace {

std::int64_t unix_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void sleep_until_ns(std::int64_t t) {
    std::int64_t now = unix_ns();
    if (t > now) std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
}

const char* env_or(const char* k, const char* dflt) {
    const char* v = std::getenv(k);
    return v && *v ? v : dflt;
}

// NCCL's logger as the plugin sees it: lines go to the job's output file.
void plugin_logger(int, unsigned long, const char*, int, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fputs("[nccl] ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
}

// Loads the profiler the way NCCL 2.28 does: NCCL_PROFILER_PLUGIN is a path
// or a short name expanded to libnccl-profiler-<name>.so; RTLD_NOW|RTLD_LOCAL.
const ProfilerV5* load_profiler(std::string& why) {
    std::string name = env_or("NCCL_PROFILER_PLUGIN", "harmonics");
    if (name == "none") return nullptr;
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib && name.find('/') == std::string::npos)
        lib = dlopen(("libnccl-profiler-" + name + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        why = dlerror();
        return nullptr;
    }
    auto* p = static_cast<const ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
    if (!p) why = "no ncclProfiler_v5 symbol";
    return p;
}

// On the emulated testbed every Slurm node is this one host, so the plugin's
// own lookup (gethostname -> leaf -> Schedd=) cannot tell the nodes apart.
// Do that lookup for the node Slurm says this rank runs on, and hand the
// plugin the answer the way an admin would: HARMONICS_SCHEDD.
void point_plugin_at_leaf_schedd(const std::string& node) {
    const char* conf = std::getenv("HARMONICS_CONF");
    if (std::getenv("HARMONICS_SCHEDD") || !conf || !*conf) return;
    try {
        HarmonicsConfig cfg = parse_harmonics_conf(conf);
        Topology topo = load_topology(cfg);
        SwitchId leaf = leaf_of_host(topo, node);
        std::string addr = leaf >= 0 ? schedd_address(cfg, topo, leaf) : std::string();
        if (!addr.empty()) setenv("HARMONICS_SCHEDD", addr.c_str(), 1);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "harmonics-trainer: %s (the plugin finds its schedd itself)\n", e.what());
    }
}

class FabricLink {
public:
    bool connect_to(const std::string& addr) {
        std::string host;
        int port = 0;
        if (!split_host_port(addr, &host, &port)) return false;
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &a.sin_addr) != 1) return false;
        // Never wait unbounded for the fabric: a DONE takes at most a few
        // scaled periods, so a minute of silence means the fabric is gone.
        timeval tv{60, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        for (int i = 0; i < 50; ++i) {
            if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    }
    void send_line(const std::string& s) { (void)!::write(fd_, s.data(), s.size()); }
    // Next line from the fabric; empty on EOF.
    std::string read_line() {
        for (;;) {
            auto nl = buf_.find('\n');
            if (nl != std::string::npos) {
                std::string line = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return line;
            }
            char tmp[512];
            ssize_t n = ::read(fd_, tmp, sizeof tmp);
            if (n <= 0) return {};
            buf_.append(tmp, static_cast<std::size_t>(n));
        }
    }

private:
    int fd_ = -1;
    std::string buf_;
};

std::int64_t field_ns(const std::string& line, const char* key) {
    auto p = line.find(std::string(key) + "=");
    return p == std::string::npos ? 0 : std::atoll(line.c_str() + p + std::strlen(key) + 1);
}

// --out may hold %j (job id) and %r (rank), as every rank of a job gets the
// same command line from srun.
std::string expand_out_path(std::string path, long job, int rank) {
    for (std::size_t p; (p = path.find("%j")) != std::string::npos;) path.replace(p, 2, std::to_string(job));
    for (std::size_t p; (p = path.find("%r")) != std::string::npos;) path.replace(p, 2, std::to_string(rank));
    return path;
}

struct Args {
    std::string model = "resnet50";
    long iterations = 50;
    double scale = 10;
    std::string fabric = "127.0.0.1:7799";
    std::string out;
    int gpus = 8;
};

int usage() {
    std::fprintf(stderr,
                 "usage: harmonics-trainer --model NAME [--iterations N] [--time-scale X] "
                 "--fabric HOST:PORT [--gpus-per-node G] [--out FILE (%%j: job, %%r: rank)]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        if (i + 1 >= argc) return usage();
        std::string v = argv[++i];
        if (k == "--model") a.model = v;
        else if (k == "--iterations") a.iterations = std::atol(v.c_str());
        else if (k == "--time-scale") a.scale = std::atof(v.c_str());
        else if (k == "--fabric") a.fabric = v;
        else if (k == "--out") a.out = v;
        else if (k == "--gpus-per-node") a.gpus = std::atoi(v.c_str());
        else return usage();
    }
    const ModelProfile* m = find_model(a.model);
    if (!m || a.scale <= 0) {
        std::fprintf(stderr, "harmonics-trainer: unknown model '%s' or bad time scale\n", a.model.c_str());
        return 2;
    }
    const long job = std::atol(env_or("SLURM_JOB_ID", "0"));
    const int rank = std::atoi(env_or("SLURM_PROCID", "0"));
    const int nranks = std::atoi(env_or("SLURM_NTASKS", "1"));
    const int nnodes = std::atoi(env_or("SLURM_NNODES", "1"));
    const std::string node = env_or("SLURMD_NODENAME", env_or("HOSTNAME", "localhost"));

    FabricLink fabric;
    if (!fabric.connect_to(a.fabric)) {
        std::fprintf(stderr, "harmonics-trainer: cannot reach the emulated fabric at %s\n", a.fabric.c_str());
        return 1;
    }
    fabric.send_line("HELLO job=" + std::to_string(job) + " rank=" + std::to_string(rank) + " nranks=" +
                     std::to_string(nranks) + " node=" + node + " gpus=" + std::to_string(a.gpus) + "\n");

    point_plugin_at_leaf_schedd(node);
    std::string why;
    const ProfilerV5* prof = load_profiler(why);
    if (!prof && !why.empty()) std::fprintf(stderr, "harmonics-trainer: profiler not loaded: %s\n", why.c_str());
    void* ctx = nullptr;
    int mask = 0;
    const uint64_t comm_id = 0x4841524d00000000ull ^ static_cast<uint64_t>(job);
    // One trainer process stands for a node's `gpus` GPUs: NCCL's communicator
    // would have a rank per GPU, and the plugin's bytes per ring edge
    // (2(n-1)/n of the buffer) must count them as harmonics-fabric does.
    const int comm_ranks = nranks * a.gpus, comm_rank = rank * a.gpus;
    if (prof && prof->init(&ctx, comm_id, &mask, "emulated-allreduce", nnodes, comm_ranks, comm_rank, plugin_logger) != 0)
        prof = nullptr;

    std::ofstream out;
    if (!a.out.empty()) {
        out.open(expand_out_path(a.out, job, rank));
        out << "iteration,start_ns,comm_start_ns,comm_end_ns,end_ns\n";
    }
    const auto scaled_ns = [&](double s) { return static_cast<std::int64_t>(s * a.scale * 1e9); };
    const std::size_t count = static_cast<std::size_t>(m->grad_bytes / 4);
    // Iterations follow each other back to back in model time: the next one
    // starts when this one's collective ended (as a GPU's next kernel does),
    // not when this process woke up to read the fabric's DONE. Wake-up
    // delays would otherwise lengthen every iteration a little and, worse,
    // round the ends of rings finishing within one wake-up of each other to
    // the same instant, locking jobs into step as no real fabric does.
    std::int64_t t0 = unix_ns();
    for (long it = 0; it < a.iterations; ++it) {
        sleep_until_ns(t0 + scaled_ns((1 - m->overlap) * m->compute_s));

        // ncclAllReduce: CollApi on the user thread (the host gate may hold it
        // here until the job's slot), then the enqueued Coll.
        void* api = nullptr;
        void* coll = nullptr;
        ProfEventDescrV5 d{};
        if (prof) {
            d.type = kEvCollApi;
            d.rank = comm_rank;
            d.collApi = ProfCollApiV5{"AllReduce", count, "ncclFloat32", 0, nullptr, false};
            prof->startEvent(ctx, &api, &d);
            if (api) prof->stopEvent(api);
            ProfEventDescrV5 c{};
            c.type = kEvColl;
            c.parentObj = api;
            c.rank = comm_rank;
            c.coll = ProfCollV5{static_cast<uint64_t>(it), "AllReduce", nullptr, nullptr, count, 0,
                                "ncclFloat32", 1, 16, "RING", "SIMPLE", nullptr};
            prof->startEvent(ctx, &coll, &c);
        }
        fabric.send_line("ENTER seq=" + std::to_string(it) + " bytes=" + std::to_string(m->grad_bytes) + "\n");
        std::string done = fabric.read_line();
        if (done.rfind("DONE", 0) != 0) {
            std::fprintf(stderr, "harmonics-trainer: fabric said '%s'\n", done.c_str());
            return 1;
        }
        const std::int64_t cs = field_ns(done, "start_ns"), ce = field_ns(done, "end_ns");
        sleep_until_ns(ce);
        if (prof) {
            // The proxy thread's view: one channel, GPU start and stop timers.
            void* ch = nullptr;
            ProfEventDescrV5 k{};
            k.type = kEvKernelCh;
            k.parentObj = coll;
            k.rank = comm_rank;
            k.kernelCh = ProfKernelChV5{0, static_cast<uint64_t>(cs)};
            prof->startEvent(ctx, &ch, &k);
            if (ch) {
                ProfStateArgsV5 st{};
                st.kernelCh.pTimer = static_cast<uint64_t>(ce);
                prof->recordEventState(ch, kStateKernelChStop, &st);
                prof->stopEvent(ch);
            }
            if (coll) prof->stopEvent(coll);
        }
        const std::int64_t t1 = std::max(ce, t0 + scaled_ns(m->compute_s));
        sleep_until_ns(t1);
        // Flushed per iteration: the demo follows progress while the job runs.
        if (out) out << it << ',' << t0 << ',' << cs << ',' << ce << ',' << t1 << std::endl;
        t0 = t1;
    }
    if (prof) prof->finalize(ctx);
    return 0;
}
