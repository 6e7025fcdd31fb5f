// HARMONICS_TRACE=FILE: one JSON object per line per completed collective.
// Written by the reporting thread only (NCCL's threads never touch the file).
#ifndef HARMONICS_NCCL_TRACE_H
#define HARMONICS_NCCL_TRACE_H

#include <cstddef>
#include <cstdio>
#include <string>

#include "completed.h"

namespace hnccl {

// Formats one line (with the trailing newline) into buf; returns its length.
size_t format_trace_line(const Completed& c, const std::string& job, char* buf, size_t cap);

class TraceWriter {
 public:
  ~TraceWriter();
  // Opens for appending. Several ranks may share a file: lines are written
  // whole, batched into one O_APPEND write of at most kBatch bytes.
  bool open(const std::string& path, std::string* err);
  bool is_open() const { return fd_ >= 0; }
  void close();
  // Buffers one line; false on a write error (the caller logs once and stops).
  bool write(const Completed& c, const std::string& job);
  // Writes what is buffered (the drain thread calls it when the queue is empty).
  bool flush();

 private:
  static constexpr size_t kBatch = 64 * 1024;
  int fd_ = -1;
  std::string buf_;
};

}  // namespace hnccl

#endif
