// The line syntax shared by harmonics.conf and Slurm's topology.conf:
// whitespace-separated `Key=Value` pairs, `#` starts a comment (outside
// double quotes), a value may be double-quoted to hold spaces, and a line
// ending in `\` continues on the next one.
#pragma once

#include <string>
#include <vector>

namespace harmonics {

struct KeyValue {
    std::string key;    // as written (keys compare case-insensitively)
    std::string value;  // quotes removed
};

struct KeyValueLine {
    int line = 0;       // 1-based; the first physical line of a continued line
    std::vector<KeyValue> pairs;
};

// Non-empty lines only. Throws ConfigError(filename, line) for a word without
// '=', an empty key or an unterminated quote.
std::vector<KeyValueLine> split_key_value_lines(const std::string& text, const std::string& filename);

// Reads a whole file; throws ConfigError(path, 0) when it cannot be read.
std::string read_config_file(const std::string& path);

std::string lowercase(const std::string& s);

}  // namespace harmonics
