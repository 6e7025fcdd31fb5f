#include "config/config_error.h"

namespace harmonics {
namespace {

std::string format(const std::string& file, int line, const std::string& key, const std::string& problem) {
    std::string s = file.empty() ? "harmonics.conf" : file;
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
    if (!key.empty()) s += "key '" + key + "': ";
    return s + problem;
}

}  // namespace

ConfigError::ConfigError(const std::string& file, int line, const std::string& key, const std::string& problem)
    : std::runtime_error(format(file, line, key, problem)), file_(file), line_(line), key_(key), problem_(problem) {}

}  // namespace harmonics
