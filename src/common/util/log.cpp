#include "util/log.h"

#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <sys/time.h>

namespace harmonics {
namespace {

enum class Sink { Stderr, File, Syslog };

// One destination per process; every line is written under the lock.
struct LogState {
    std::mutex mu;
    std::string component = "harmonics";
    std::string path;
    Sink sink = Sink::Stderr;
    FILE* file = nullptr;
    bool syslog_open = false;
    std::atomic<int> level{static_cast<int>(LogLevel::Info)};
};

LogState& state() {
    static LogState s;
    return s;
}

int syslog_priority(LogLevel l) {
    switch (l) {
        case LogLevel::Error: return LOG_ERR;
        case LogLevel::Warning: return LOG_WARNING;
        case LogLevel::Info: return LOG_INFO;
        case LogLevel::Debug: return LOG_DEBUG;
    }
    return LOG_INFO;
}

void close_locked(LogState& s) {
    if (s.file) std::fclose(s.file);
    s.file = nullptr;
    if (s.syslog_open) closelog();
    s.syslog_open = false;
    s.sink = Sink::Stderr;
}

}  // namespace

bool parse_log_level(const std::string& word, LogLevel* out) {
    std::string w;
    for (char c : word) w += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (w == "error") *out = LogLevel::Error;
    else if (w == "warning" || w == "warn") *out = LogLevel::Warning;
    else if (w == "info") *out = LogLevel::Info;
    else if (w == "debug") *out = LogLevel::Debug;
    else return false;
    return true;
}

const char* log_level_name(LogLevel level) {
    switch (level) {
        case LogLevel::Error: return "error";
        case LogLevel::Warning: return "warning";
        case LogLevel::Info: return "info";
        case LogLevel::Debug: return "debug";
    }
    return "info";
}

bool log_open(const std::string& component, const std::string& destination, LogLevel level) {
    LogState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    FILE* f = nullptr;
    if (!destination.empty() && destination != "stderr" && destination != "syslog") {
        f = std::fopen(destination.c_str(), "a");
        if (!f) return false;
        setvbuf(f, nullptr, _IOLBF, 0);
    }
    close_locked(s);
    s.component = component;
    s.path = f ? destination : "";
    s.level = static_cast<int>(level);
    if (f) {
        s.file = f;
        s.sink = Sink::File;
    } else if (destination == "syslog") {
        // openlog keeps the pointer: the string lives in the state until the next log_open.
        openlog(s.component.c_str(), LOG_PID | LOG_NDELAY, LOG_DAEMON);
        s.syslog_open = true;
        s.sink = Sink::Syslog;
    }
    return true;
}

void log_set_level(LogLevel level) { state().level = static_cast<int>(level); }

LogLevel log_level() { return static_cast<LogLevel>(state().level.load()); }

bool log_reopen() {
    LogState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.sink != Sink::File) return true;
    FILE* f = std::fopen(s.path.c_str(), "a");
    if (!f) return false;
    setvbuf(f, nullptr, _IOLBF, 0);
    std::fclose(s.file);
    s.file = f;
    return true;
}

void log_close() {
    LogState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    close_locked(s);
}

void log_vmsg(LogLevel level, const char* fmt, va_list ap) {
    LogState& s = state();
    if (!fmt || static_cast<int>(level) > s.level) return;
    int saved_errno = errno;  // callers may log and then look at errno
    char small[1024];
    std::string text;
    va_list copy;
    va_copy(copy, ap);
    int n = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (n < 0) {
        text = fmt;
    } else if (static_cast<std::size_t>(n) < sizeof small) {
        text.assign(small, static_cast<std::size_t>(n));
    } else {
        text.resize(static_cast<std::size_t>(n) + 1);
        std::vsnprintf(&text[0], text.size(), fmt, ap);
        text.resize(static_cast<std::size_t>(n));
    }
    while (!text.empty() && text.back() == '\n') text.pop_back();

    std::lock_guard<std::mutex> lock(s.mu);
    if (s.sink == Sink::Syslog) {
        syslog(syslog_priority(level), "%s: %s", log_level_name(level), text.c_str());
    } else {
        struct timeval tv;
        gettimeofday(&tv, nullptr);
        struct tm tm;
        localtime_r(&tv.tv_sec, &tm);
        char stamp[40];
        std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        FILE* out = s.sink == Sink::File ? s.file : stderr;
        std::fprintf(out, "%s.%03ld %s[%ld]: %s: %s\n", stamp, static_cast<long>(tv.tv_usec / 1000),
                     s.component.c_str(), static_cast<long>(getpid()), log_level_name(level), text.c_str());
        std::fflush(out);
    }
    errno = saved_errno;
}

void log_msg(LogLevel level, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_vmsg(level, fmt, ap);
    va_end(ap);
}

}  // namespace harmonics
