// harmonics-fabric: the emulated fabric of the testbed demo. Trainer ranks
// (harmonics-trainer) connect over loopback TCP and announce each collective;
// when every rank of a job has entered collective `seq`, its all-reduce
// enters the FabricModel and every rank is told when it finishes. Jobs that
// share an uplink slow each other down exactly as max-min sharing says.
//
// Line protocol (emulation only, not Harmonics' wire protocol):
//   client: HELLO job=<id> rank=<r> nranks=<n> node=<name> gpus=<g>
//   client: ENTER seq=<k> bytes=<S>
//   server: DONE seq=<k> start_ns=<unix ns> end_ns=<unix ns>
//   server: ERR <reason>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/harmonics_conf.h"
#include "fabric_model.h"
#include "model/traffic.h"

using namespace harmonics;

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

std::int64_t unix_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::map<std::string, std::string> fields(const std::string& line) {
    std::map<std::string, std::string> out;
    std::istringstream in(line);
    std::string word;
    in >> word;  // the verb
    while (in >> word) {
        auto eq = word.find('=');
        if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return out;
}

struct Client {
    int fd;
    std::string inbuf;
    JobId job = -1;
    int rank = -1;
};

struct JobState {
    int nranks = 0;
    int gpus = 1;
    std::map<int, NodeId> node_of_rank;
    std::map<std::uint64_t, std::set<int>> entered;  // seq -> ranks in
    std::map<std::uint64_t, double> bytes;
};

class Server {
public:
    Server(Topology topo, double scale) : topo_(std::move(topo)), model_(topo_), scale_(scale) {
        t0_ns_ = unix_ns();
    }
    int listen_on(int port);
    void run();

private:
    double model_now() const { return (unix_ns() - t0_ns_) / 1e9 / scale_; }
    std::int64_t wall_ns(double model_s) const { return t0_ns_ + std::llround(model_s * scale_ * 1e9); }
    void on_line(Client& c, const std::string& line);
    void maybe_start(JobId job, std::uint64_t seq);
    void deliver(const std::vector<emu::Completion>& done);
    void send(int fd, const std::string& s) { (void)!::write(fd, s.data(), s.size()); }

    Topology topo_;
    emu::FabricModel model_;
    double scale_;
    std::int64_t t0_ns_;
    int listen_fd_ = -1;
    std::vector<Client> clients_;
    std::map<JobId, JobState> jobs_;
};

int Server::listen_on(int port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 256) != 0) {
        std::fprintf(stderr, "harmonics-fabric: cannot listen on 127.0.0.1:%d: %s\n", port, std::strerror(errno));
        return -1;
    }
    return 0;
}

void Server::on_line(Client& c, const std::string& line) {
    auto f = fields(line);
    if (line.rfind("HELLO", 0) == 0) {
        c.job = std::stoll(f["job"]);
        c.rank = std::stoi(f["rank"]);
        NodeId n = topo_.find_node(f["node"]);
        if (n < 0) {
            send(c.fd, "ERR unknown node " + f["node"] + "\n");
            return;
        }
        JobState& j = jobs_[c.job];
        j.nranks = std::stoi(f["nranks"]);
        j.gpus = f.count("gpus") ? std::stoi(f["gpus"]) : 1;
        j.node_of_rank[c.rank] = n;
    } else if (line.rfind("ENTER", 0) == 0 && c.job >= 0) {
        std::uint64_t seq = std::stoull(f["seq"]);
        JobState& j = jobs_[c.job];
        j.entered[seq].insert(c.rank);
        j.bytes[seq] = std::stod(f["bytes"]);
        maybe_start(c.job, seq);
    } else {
        send(c.fd, "ERR bad line\n");
    }
}

void Server::maybe_start(JobId job, std::uint64_t seq) {
    JobState& j = jobs_[job];
    if (static_cast<int>(j.entered[seq].size()) < j.nranks) return;
    if (static_cast<int>(j.node_of_rank.size()) < j.nranks) return;
    std::vector<NodeId> nodes;
    for (auto& [rank, node] : j.node_of_rank) nodes.push_back(node);
    JobSpec spec;
    spec.id = job;
    spec.nodes = static_cast<int>(nodes.size());
    spec.gpus_per_node = j.gpus;
    ModelProfile m;
    m.name = "emulated";
    m.grad_bytes = j.bytes[seq];
    JobProfile p = make_profile(topo_, spec, m, nodes);
    CommPhase phase = p.phases.empty() ? CommPhase{} : p.phases.front();
    model_.start(job, seq, phase, model_now());
    j.entered.erase(seq);
    j.bytes.erase(seq);
}

void Server::deliver(const std::vector<emu::Completion>& done) {
    for (const emu::Completion& d : done) {
        std::string msg = "DONE seq=" + std::to_string(d.seq) + " start_ns=" + std::to_string(wall_ns(d.start_s)) +
                          " end_ns=" + std::to_string(wall_ns(d.end_s)) + "\n";
        for (Client& c : clients_)
            if (c.job == d.job) send(c.fd, msg);
    }
}

void Server::run() {
    while (!g_stop) {
        std::vector<pollfd> pfd{{listen_fd_, POLLIN, 0}};
        for (Client& c : clients_) pfd.push_back({c.fd, POLLIN, 0});
        double next = model_.next_completion_s();
        int timeout_ms = 200;
        if (std::isfinite(next)) {
            double wait_ms = (next - model_now()) * scale_ * 1e3;
            timeout_ms = static_cast<int>(std::clamp(std::ceil(wait_ms), 0.0, 200.0));
        }
        ::poll(pfd.data(), pfd.size(), timeout_ms);
        deliver(model_.advance(model_now()));
        if (pfd[0].revents & POLLIN) {
            int fd = ::accept(listen_fd_, nullptr, nullptr);
            if (fd >= 0) clients_.push_back(Client{fd, {}, -1, -1});
        }
        for (std::size_t i = 1; i < pfd.size(); ++i) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Client& c = clients_[i - 1];
            char buf[4096];
            ssize_t n = ::read(c.fd, buf, sizeof buf);
            if (n <= 0) {
                ::close(c.fd);
                c.fd = -1;
                continue;
            }
            c.inbuf.append(buf, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = c.inbuf.find('\n')) != std::string::npos;) {
                std::string line = c.inbuf.substr(0, nl);
                c.inbuf.erase(0, nl + 1);
                try {
                    on_line(c, line);
                } catch (const std::exception& e) {
                    send(c.fd, std::string("ERR ") + e.what() + "\n");
                }
            }
        }
        clients_.erase(std::remove_if(clients_.begin(), clients_.end(), [](const Client& c) { return c.fd < 0; }),
                       clients_.end());
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string conf = default_harmonics_conf_path();
    int port = 0;
    double scale = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--config") conf = argv[i + 1];
        else if (k == "--port") port = std::atoi(argv[i + 1]);
        else if (k == "--time-scale") scale = std::atof(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: harmonics-fabric --config harmonics.conf --port P [--time-scale X]\n");
            return 2;
        }
    }
    if (port <= 0 || scale <= 0) {
        std::fprintf(stderr, "harmonics-fabric: --port and a positive --time-scale are required\n");
        return 2;
    }
    try {
        HarmonicsConfig cfg = parse_harmonics_conf(conf);
        Server server(load_topology(cfg), scale);
        if (server.listen_on(port) != 0) return 1;
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        signal(SIGPIPE, SIG_IGN);
        std::fprintf(stderr, "harmonics-fabric: EMULATED fabric on 127.0.0.1:%d, time scale x%g\n", port, scale);
        server.run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "harmonics-fabric: %s\n", e.what());
        return 1;
    }
    return 0;
}
