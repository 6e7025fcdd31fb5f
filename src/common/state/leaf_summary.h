// The per-leaf summary that harmonics-coordd publishes and job_submit/harmonics
// reads: one small text file, replaced atomically, so slurmctld's submit path
// only ever reads a local file it has cached (it must never wait on a socket).
//
// Format (version 1), one record per line, '#' starts a comment:
//   harmonics-leaf-summary 1
//   epoch 42
//   written 1764500000.250           (unix seconds; readers judge staleness by it)
//   leaf rack1 nodes=n[1-4] feature=rack1 size=4 uplink_load=0.35 accept=1
//   leaf rack2 nodes=n[5-8] feature=- size=4 uplink_load=0.92 accept=0
//   partition debug nodes=n[1-8] default=1     (optional, see below)
// `nodes` is a Slurm hostlist expression, `feature` the node feature that names
// the leaf in slurm.conf ("-" when the nodes carry none), `uplink_load` the mean
// load of the leaf's uplink over one hyperperiod (0..1 of capacity), `accept`
// whether coordd judges the uplink compatible with one more cross-leaf job.
// `partition` records (optional) list each Slurm partition's nodes; with them
// job_submit only steers a job towards leaves its partition has, since Slurm
// rejects a job whose constraint no node of its partition can meet. Without
// them every partition is taken to span all leaves.
// Unknown keys in a leaf or partition line are ignored so coordd may add
// fields without a version bump; a missing required key is an error.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace harmonics::state {

struct LeafSummary {
    std::string name;         // leaf switch name from topology.conf
    std::string nodes;        // hostlist expression, e.g. "n[1-4]"
    std::string feature;      // empty when the nodes carry no leaf feature
    uint32_t size = 0;        // nodes under the leaf
    double uplink_load = 0;   // 0..1 of uplink capacity
    bool accept = true;       // uplink compatible with one more cross-leaf job
};

struct PartitionSummary {
    std::string name;         // Slurm partition name
    std::string nodes;        // hostlist expression of its nodes
    bool is_default = false;  // Default=YES in slurm.conf
};

struct Summary {
    uint64_t epoch = 0;
    double written = 0;       // unix seconds when coordd wrote it
    std::vector<LeafSummary> leaves;
    std::vector<PartitionSummary> partitions;  // empty: not published
};

constexpr int kSummaryVersion = 1;

// Text of a summary in the format above.
std::string format_summary(const Summary& s);

// Parses `text`; on error returns false and sets *err to "path:line: key: why".
bool parse_summary(const std::string& text, const std::string& path, Summary* out, std::string* err);

// Writes the summary so that a reader sees either the old or the new file,
// never a partial one: temporary file in the same directory, fsync, rename.
bool write_summary(const std::string& path, const Summary& s, std::string* err);

// Reads the summary file and keeps it; later calls re-read only when the
// file's identity (inode, size, mtime) changed. Thread-safe.
class SummaryReader {
public:
    explicit SummaryReader(std::string path) : path_(std::move(path)) {}
    // The current summary, or null with *err set (missing, unreadable, bad).
    std::shared_ptr<const Summary> get(std::string* err);
    // How many times the file was actually parsed (for tests and logs).
    uint64_t reads() const { return reads_; }
    const std::string& path() const { return path_; }

private:
    struct Stamp {
        dev_t dev = 0;
        ino_t ino = 0;
        off_t size = -1;
        struct timespec mtime {};
        bool operator==(const Stamp& o) const;
    };
    std::string path_;
    std::mutex mu_;
    Stamp stamp_;
    std::shared_ptr<const Summary> cached_;
    std::string cached_err_;
    std::atomic<uint64_t> reads_{0};
};

}  // namespace harmonics::state
