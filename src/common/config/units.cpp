#include "config/units.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace harmonics {
namespace {

// Leading number and the unit after it ("100Gbps" -> 100, "Gbps").
bool split_number(const std::string& text, double* value, std::string* unit) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(begin, &end);
    if (end == begin || errno == ERANGE || !std::isfinite(v)) return false;
    // strtod takes hex and "inf"; harmonics.conf wants plain decimals.
    for (const char* p = begin; p < end; ++p)
        if (!(std::isdigit(static_cast<unsigned char>(*p)) || *p == '.' || *p == '-' || *p == '+' || *p == 'e' ||
              *p == 'E'))
            return false;
    *value = v;
    *unit = std::string(end);
    return true;
}

double si_prefix(char c) {
    switch (c) {
        case 'k': case 'K': return 1e3;
        case 'M': return 1e6;
        case 'G': case 'g': return 1e9;
        case 'T': case 't': return 1e12;
        default: return 0;
    }
}

}  // namespace

bool parse_bandwidth(const std::string& text, double* Bps) {
    double v;
    std::string unit;
    if (!split_number(text, &v, &unit) || !(v > 0)) return false;
    double scale = 1;
    std::string rest = unit;
    if (!rest.empty() && si_prefix(rest[0]) > 0 && rest != "bps" && rest != "B/s" && rest != "Bps") {
        scale = si_prefix(rest[0]);
        rest = rest.substr(1);
    }
    if (unit.empty()) {
        *Bps = v;  // plain number: bytes per second
    } else if (rest == "bps" || rest == "b/s") {
        *Bps = v * scale / 8;
    } else if (rest == "B/s" || rest == "Bps") {
        *Bps = v * scale;
    } else {
        return false;
    }
    return std::isfinite(*Bps);
}

bool parse_duration(const std::string& text, double* seconds) {
    double v;
    std::string unit;
    if (!split_number(text, &v, &unit) || v < 0) return false;
    double scale;
    if (unit.empty() || unit == "s" || unit == "sec") scale = 1;
    else if (unit == "ns") scale = 1e-9;
    else if (unit == "us") scale = 1e-6;
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "min") scale = 60;
    else if (unit == "h") scale = 3600;
    else return false;
    *seconds = v * scale;
    return true;
}

bool parse_size(const std::string& text, std::size_t* bytes) {
    double v;
    std::string unit;
    if (!split_number(text, &v, &unit) || v < 0) return false;
    double scale;
    if (unit.empty() || unit == "B") scale = 1;
    else if (unit == "KB" || unit == "kB") scale = 1e3;
    else if (unit == "MB") scale = 1e6;
    else if (unit == "GB") scale = 1e9;
    else if (unit == "KiB") scale = 1024.0;
    else if (unit == "MiB") scale = 1024.0 * 1024;
    else if (unit == "GiB") scale = 1024.0 * 1024 * 1024;
    else return false;
    double b = v * scale;
    if (b != std::floor(b) || b > 1e15) return false;
    *bytes = static_cast<std::size_t>(b);
    return true;
}

bool parse_bool(const std::string& text, bool* value) {
    std::string s;
    for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "1" || s == "yes" || s == "true" || s == "on") *value = true;
    else if (s == "0" || s == "no" || s == "false" || s == "off") *value = false;
    else return false;
    return true;
}

bool parse_number(const std::string& text, double* value, bool percent_ok) {
    double v;
    std::string unit;
    if (!split_number(text, &v, &unit)) return false;
    if (unit == "%" && percent_ok) v /= 100;
    else if (!unit.empty()) return false;
    *value = v;
    return true;
}

bool parse_int(const std::string& text, long lo, long hi, long* value) {
    if (text.empty() || text.size() > 18) return false;
    std::size_t i = text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    for (; i < text.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    long v = std::strtol(text.c_str(), nullptr, 10);
    if (v < lo || v > hi) return false;
    *value = v;
    return true;
}

std::string format_bandwidth(double Bps) {
    double bits = Bps * 8;
    const char* unit = "bps";
    double v = bits;
    if (bits >= 1e12) v = bits / 1e12, unit = "Tbps";
    else if (bits >= 1e9) v = bits / 1e9, unit = "Gbps";
    else if (bits >= 1e6) v = bits / 1e6, unit = "Mbps";
    else if (bits >= 1e3) v = bits / 1e3, unit = "Kbps";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g%s", v, unit);
    return buf;
}

std::string format_duration(double s) {
    char buf[64];
    if (s != 0 && s < 1e-3) std::snprintf(buf, sizeof buf, "%.15gus", s * 1e6);
    else if (s != 0 && s < 1) std::snprintf(buf, sizeof buf, "%.15gms", s * 1e3);
    else if (s >= 60 && std::fmod(s, 60) == 0) std::snprintf(buf, sizeof buf, "%.15gmin", s / 60);
    else std::snprintf(buf, sizeof buf, "%.15gs", s);
    return buf;
}

}  // namespace harmonics
