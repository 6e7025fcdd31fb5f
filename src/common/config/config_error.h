// The one error type of configuration parsing: it names the file, the line
// and the key, so an admin can go straight to the mistake.
#pragma once

#include <stdexcept>
#include <string>

namespace harmonics {

// what() is "harmonics.conf:12: key 'Uplink': bad bandwidth '20Gbs' (use e.g. 100Gbps, 25GB/s)".
// line is 0 when the problem belongs to no line ("topology.conf: no switches
// defined"); key is empty when it belongs to no key ("harmonics.conf:3: ...").
class ConfigError : public std::runtime_error {
public:
    ConfigError(const std::string& file, int line, const std::string& key, const std::string& problem);
    const std::string& file() const { return file_; }
    int line() const { return line_; }
    const std::string& key() const { return key_; }
    const std::string& problem() const { return problem_; }

private:
    std::string file_;
    int line_;
    std::string key_;
    std::string problem_;
};

}  // namespace harmonics
