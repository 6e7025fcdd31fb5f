#include "log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace hnccl {

namespace {
std::atomic<ProfLoggerV5> g_logger{nullptr};
std::atomic<unsigned> g_logged{0};

std::atomic<bool> g_silent{false};

void emit(bool warn, const char* fmt, va_list ap) {
  if (g_silent.load(std::memory_order_acquire)) return;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  ProfLoggerV5 l = g_logger.load(std::memory_order_acquire);
  if (l != nullptr)
    l(warn ? kNcclLogWarn : kNcclLogInfo, kNcclLogAll, __FILE__, __LINE__, "harmonics: %s", msg);
  else
    std::fprintf(stderr, "harmonics: %s\n", msg);
}
}  // namespace

void log_set_logger(ProfLoggerV5 logger) {
  if (logger != nullptr) g_logger.store(logger, std::memory_order_release);
  g_silent.store(false, std::memory_order_release);
}

void log_silence() { g_silent.store(true, std::memory_order_release); }

void log_line(bool warn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(warn, fmt, ap);
  va_end(ap);
}

void log_once(Once kind, const char* fmt, ...) {
  const unsigned bit = 1u << unsigned(kind);
  if (g_logged.fetch_or(bit, std::memory_order_relaxed) & bit) return;
  va_list ap;
  va_start(ap, fmt);
  emit(true, fmt, ap);
  va_end(ap);
}

}  // namespace hnccl
