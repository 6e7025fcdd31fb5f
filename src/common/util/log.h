// Logging for daemons, plugins and tools (never for policy code, which has no
// I/O). One process-wide destination: stderr, a file, or syslog. Lines carry
// a timestamp, the level and the component ("harmonics-schedd: ...").
// Thread-safe: each line is written whole under a lock.
#pragma once

#include <cstdarg>
#include <string>

namespace harmonics {

enum class LogLevel { Error = 0, Warning = 1, Info = 2, Debug = 3 };

// "error", "warning" (or "warn"), "info", "debug" -> level; false if unknown.
bool parse_log_level(const std::string& word, LogLevel* out);
const char* log_level_name(LogLevel level);

// Where log lines go. `destination` is "" or "stderr" for standard error,
// "syslog" for syslog(3) (facility daemon), otherwise a file path opened for
// appending. Returns false and leaves the previous destination in place when
// the file cannot be opened (errno is kept). `component` prefixes every line.
bool log_open(const std::string& component, const std::string& destination, LogLevel level);
void log_set_level(LogLevel level);
LogLevel log_level();
// Reopen the file destination (after logrotate; call from the daemon's SIGHUP
// handler event, not from a signal handler).
bool log_reopen();
void log_close();

void log_msg(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(LogLevel level, const char* fmt, va_list ap);

#define HLOG_ERROR(...) ::harmonics::log_msg(::harmonics::LogLevel::Error, __VA_ARGS__)
#define HLOG_WARN(...) ::harmonics::log_msg(::harmonics::LogLevel::Warning, __VA_ARGS__)
#define HLOG_INFO(...) ::harmonics::log_msg(::harmonics::LogLevel::Info, __VA_ARGS__)
// Debug lines skip formatting entirely when the level is lower.
#define HLOG_DEBUG(...)                                                        \
    do {                                                                       \
        if (::harmonics::log_level() >= ::harmonics::LogLevel::Debug)          \
            ::harmonics::log_msg(::harmonics::LogLevel::Debug, __VA_ARGS__);   \
    } while (0)

}  // namespace harmonics
