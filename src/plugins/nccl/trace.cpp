#include "trace.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "records.h"

namespace hnccl {

size_t format_trace_line(const Completed& c, const std::string& job, char* buf, size_t cap) {
  // job is SLURM_JOB_ID (digits) or null; comm ids are 64-bit and go out as
  // hex strings because JSON readers parse numbers as doubles.
  const bool numeric = !job.empty() && job.find_first_not_of("0123456789") == std::string::npos;
  std::string j = job.empty() ? "null" : job;
  if (!job.empty() && !numeric) {  // quoted, keeping only characters safe in JSON
    j = "\"";
    for (char ch : job)
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.') j += ch;
    j += "\"";
  }
  const int n = snprintf(buf, cap,
                         "{\"job\":%s,\"rank\":%d,\"comm\":\"0x%016" PRIx64 "\",\"seq\":%" PRIu64
                         ",\"func\":\"%s\",\"bytes\":%" PRIu64 ",\"edge_bytes\":%" PRIu64 ",\"enqueue_ns\":%" PRIu64
                         ",\"gpu_start_ns\":%" PRIu64 ",\"gpu_end_ns\":%" PRIu64 ",\"gated_ns\":%" PRIu64 "}\n",
                         j.c_str(), c.rank, c.comm_id, c.seq, func_name(c.func), c.bytes, c.edge_bytes,
                         c.enqueue_ns, c.gpu_start_ns, c.gpu_end_ns, c.gated_ns);
  if (n < 0) return 0;
  return size_t(n) < cap ? size_t(n) : cap - 1;
}

TraceWriter::~TraceWriter() { close(); }

void TraceWriter::close() {
  if (fd_ >= 0) {
    flush();
    ::close(fd_);
  }
  fd_ = -1;
  buf_.clear();
}

bool TraceWriter::open(const std::string& path, std::string* err) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    *err = "HARMONICS_TRACE=" + path + ": " + std::strerror(errno);
    return false;
  }
  buf_.reserve(kBatch);
  return true;
}

bool TraceWriter::write(const Completed& c, const std::string& job) {
  if (fd_ < 0) return false;
  char line[512];
  const size_t n = format_trace_line(c, job, line, sizeof line);
  if (buf_.size() + n > kBatch && !flush()) return false;
  buf_.append(line, n);
  return true;
}

bool TraceWriter::flush() {
  size_t off = 0;
  while (off < buf_.size()) {
    const ssize_t w = ::write(fd_, buf_.data() + off, buf_.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += size_t(w);
  }
  buf_.clear();
  return true;
}

}  // namespace hnccl
