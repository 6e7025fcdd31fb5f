// Values of harmonics.conf with their units. Each parser returns false for a
// malformed value; the caller turns that into a ConfigError naming the key.
#pragma once

#include <cstddef>
#include <string>

namespace harmonics {

// Bandwidth -> bytes/s. Bits: bps, Kbps, Mbps, Gbps, Tbps (also Gb/s);
// bytes: B/s, KB/s, MB/s, GB/s, TB/s (decimal, also GBps); a plain number is
// bytes/s. "100Gbps" = 12.5e9, "25GB/s" = 25e9. Must be > 0.
bool parse_bandwidth(const std::string& text, double* Bps);
// Duration -> seconds: ns, us, ms, s, min, h; a plain number is seconds.
// "500ms" = 0.5, "5min" = 300. Must be >= 0.
bool parse_duration(const std::string& text, double* seconds);
// Size -> bytes: B, KB/MB/GB (decimal), KiB/MiB/GiB (binary); plain = bytes.
bool parse_size(const std::string& text, std::size_t* bytes);
// 1/0, yes/no, true/false, on/off, any case.
bool parse_bool(const std::string& text, bool* value);
// A plain decimal number (no unit); "2%" is accepted as 0.02 when percent_ok.
bool parse_number(const std::string& text, double* value, bool percent_ok = false);
// An integer in [lo, hi].
bool parse_int(const std::string& text, long lo, long hi, long* value);

// Human forms for messages and harmonicsctl: 12.5e9 -> "100Gbps", 0.25 -> "250ms".
std::string format_bandwidth(double Bps);
std::string format_duration(double seconds);

}  // namespace harmonics
