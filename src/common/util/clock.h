// The clocks the daemons and the wire layer read: monotonic seconds for
// timeouts and rates, Unix time (CLOCK_REALTIME) for the absolute instants
// schedules and hellos carry, and libevent's timeval for a delay.
#pragma once

#include <sys/time.h>

#include <chrono>
#include <cstdint>
#include <ctime>

namespace harmonics {

inline double mono_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double wall_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline std::int64_t unix_time_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline timeval to_timeval(double s) {
    timeval tv;
    tv.tv_sec = long(s);
    tv.tv_usec = long((s - double(tv.tv_sec)) * 1e6);
    return tv;
}

}  // namespace harmonics
