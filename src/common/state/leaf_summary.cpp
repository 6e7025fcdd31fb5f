// Leaf summary: text format, atomic writer, cached reader (see leaf_summary.h).
#include "state/leaf_summary.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace harmonics::state {

namespace {

std::string where(const std::string& path, int line) { return path + ":" + std::to_string(line) + ": "; }

// Splits on blanks (spaces or tabs).
std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    std::string w;
    while (in >> w) out.push_back(w);
    return out;
}

bool parse_double(const std::string& v, double* out) {
    if (v.empty()) return false;
    char* end = nullptr;
    errno = 0;
    double d = std::strtod(v.c_str(), &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(d)) return false;
    *out = d;
    return true;
}

bool parse_u64(const std::string& v, uint64_t* out) {
    if (v.empty() || v[0] == '-') return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = x;
    return true;
}

// A leaf line: "leaf NAME key=value ...".
bool parse_leaf(const std::vector<std::string>& w, const std::string& at, LeafSummary* leaf, std::string* err) {
    if (w.size() < 2) { *err = at + "leaf: missing leaf name"; return false; }
    leaf->name = w[1];
    bool have_nodes = false, have_size = false, have_load = false, have_accept = false;
    for (size_t i = 2; i < w.size(); ++i) {
        size_t eq = w[i].find('=');
        if (eq == std::string::npos || eq == 0) { *err = at + w[i] + ": expected key=value"; return false; }
        std::string key = w[i].substr(0, eq), val = w[i].substr(eq + 1);
        if (key == "nodes") {
            if (val.empty()) { *err = at + "nodes: empty"; return false; }
            leaf->nodes = val;
            have_nodes = true;
        } else if (key == "feature") {
            leaf->feature = (val == "-") ? "" : val;
        } else if (key == "size") {
            uint64_t n = 0;
            if (!parse_u64(val, &n) || n == 0 || n > 1000000) { *err = at + "size: not a node count: " + val; return false; }
            leaf->size = static_cast<uint32_t>(n);
            have_size = true;
        } else if (key == "uplink_load") {
            if (!parse_double(val, &leaf->uplink_load) || leaf->uplink_load < 0) {
                *err = at + "uplink_load: not a load >= 0: " + val;
                return false;
            }
            have_load = true;
        } else if (key == "accept") {
            if (val != "0" && val != "1") { *err = at + "accept: expected 0 or 1: " + val; return false; }
            leaf->accept = (val == "1");
            have_accept = true;
        }
        // Other keys: newer coordd fields, ignored on purpose.
    }
    const char* missing = !have_nodes ? "nodes" : !have_size ? "size" : !have_load ? "uplink_load"
                        : !have_accept ? "accept" : nullptr;
    if (missing) { *err = at + missing + ": missing in leaf " + leaf->name; return false; }
    return true;
}

// A partition line: "partition NAME nodes=HOSTLIST [default=0|1]".
bool parse_partition(const std::vector<std::string>& w, const std::string& at, PartitionSummary* part,
                     std::string* err) {
    if (w.size() < 2) { *err = at + "partition: missing partition name"; return false; }
    part->name = w[1];
    for (size_t i = 2; i < w.size(); ++i) {
        size_t eq = w[i].find('=');
        if (eq == std::string::npos || eq == 0) { *err = at + w[i] + ": expected key=value"; return false; }
        std::string key = w[i].substr(0, eq), val = w[i].substr(eq + 1);
        if (key == "nodes") {
            part->nodes = val;
        } else if (key == "default") {
            if (val != "0" && val != "1") { *err = at + "default: expected 0 or 1: " + val; return false; }
            part->is_default = (val == "1");
        }
    }
    if (part->nodes.empty()) { *err = at + "nodes: missing in partition " + part->name; return false; }
    return true;
}

}  // namespace

std::string format_summary(const Summary& s) {
    std::ostringstream out;
    out << "# Harmonics leaf summary, written by harmonics-coordd for job_submit/harmonics.\n";
    out << "harmonics-leaf-summary " << kSummaryVersion << "\n";
    out << "epoch " << s.epoch << "\n";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", s.written);
    out << "written " << buf << "\n";
    for (const LeafSummary& l : s.leaves) {
        std::snprintf(buf, sizeof buf, "%.4f", l.uplink_load);
        out << "leaf " << l.name << " nodes=" << l.nodes << " feature=" << (l.feature.empty() ? "-" : l.feature)
            << " size=" << l.size << " uplink_load=" << buf << " accept=" << (l.accept ? 1 : 0) << "\n";
    }
    for (const PartitionSummary& p : s.partitions)
        out << "partition " << p.name << " nodes=" << p.nodes << " default=" << (p.is_default ? 1 : 0) << "\n";
    return out.str();
}

bool parse_summary(const std::string& text, const std::string& path, Summary* out, std::string* err) {
    Summary s;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    bool have_version = false, have_written = false;
    while (std::getline(in, line)) {
        ++lineno;
        size_t hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        std::vector<std::string> w = words(line);
        if (w.empty()) continue;
        const std::string at = where(path, lineno);
        if (!have_version) {
            if (w[0] != "harmonics-leaf-summary" || w.size() != 2) {
                *err = at + "harmonics-leaf-summary: expected as the first record";
                return false;
            }
            if (w[1] != std::to_string(kSummaryVersion)) {
                *err = at + "harmonics-leaf-summary: unsupported version " + w[1];
                return false;
            }
            have_version = true;
            continue;
        }
        if (w[0] == "epoch") {
            if (w.size() != 2 || !parse_u64(w[1], &s.epoch)) { *err = at + "epoch: expected one unsigned number"; return false; }
        } else if (w[0] == "written") {
            if (w.size() != 2 || !parse_double(w[1], &s.written) || s.written < 0) {
                *err = at + "written: expected unix seconds";
                return false;
            }
            have_written = true;
        } else if (w[0] == "leaf") {
            LeafSummary leaf;
            if (!parse_leaf(w, at, &leaf, err)) return false;
            for (const LeafSummary& o : s.leaves)
                if (o.name == leaf.name) { *err = at + "leaf: duplicate leaf " + leaf.name; return false; }
            s.leaves.push_back(std::move(leaf));
        } else if (w[0] == "partition") {
            PartitionSummary part;
            if (!parse_partition(w, at, &part, err)) return false;
            for (const PartitionSummary& o : s.partitions)
                if (o.name == part.name) { *err = at + "partition: duplicate partition " + part.name; return false; }
            s.partitions.push_back(std::move(part));
        } else {
            *err = at + w[0] + ": unknown record";
            return false;
        }
    }
    if (!have_version) { *err = path + ": harmonics-leaf-summary: missing header (empty file?)"; return false; }
    if (!have_written) { *err = path + ": written: missing"; return false; }
    *out = std::move(s);
    return true;
}

bool write_summary(const std::string& path, const Summary& s, std::string* err) {
    const std::string text = format_summary(s);
    // Same directory as the target so rename() is atomic; pid keeps two
    // writers from sharing one temporary name.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) { *err = tmp + ": " + std::strerror(errno); return false; }
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *err = tmp + ": write: " + std::strerror(errno);
            ::close(fd);
            ::unlink(tmp.c_str());
            return false;
        }
        done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        *err = tmp + ": fsync/close: " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        *err = path + ": rename: " + std::strerror(errno);
        ::unlink(tmp.c_str());
        return false;
    }
    return true;
}

bool SummaryReader::Stamp::operator==(const Stamp& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
           mtime.tv_nsec == o.mtime.tv_nsec;
}

std::shared_ptr<const Summary> SummaryReader::get(std::string* err) {
    std::lock_guard<std::mutex> lock(mu_);
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0) {
        *err = path_ + ": " + std::strerror(errno);
        cached_.reset();
        stamp_ = Stamp{};
        return nullptr;
    }
    Stamp now;
    now.dev = st.st_dev;
    now.ino = st.st_ino;
    now.size = st.st_size;
    now.mtime = st.st_mtim;
    if (now == stamp_) {
        if (!cached_) *err = cached_err_;
        return cached_;
    }
    // Changed (or first call): read it whole. The writer renames a complete
    // file into place, so what we open is never half written.
    stamp_ = now;
    ++reads_;
    cached_.reset();
    FILE* f = std::fopen(path_.c_str(), "re");
    if (!f) {
        cached_err_ = path_ + ": " + std::strerror(errno);
        *err = cached_err_;
        stamp_ = Stamp{};  // try again next time
        return nullptr;
    }
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
    auto s = std::make_shared<Summary>();
    if (!parse_summary(text, path_, s.get(), &cached_err_)) {
        *err = cached_err_;
        return nullptr;
    }
    cached_ = std::move(s);
    cached_err_.clear();
    return cached_;
}

}  // namespace harmonics::state
