#include "config/kv_lines.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/config_error.h"

namespace harmonics {

std::string lowercase(const std::string& s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

namespace {

// One logical line -> pairs.
KeyValueLine split_line(const std::string& text, int line, const std::string& filename) {
    KeyValueLine out;
    out.line = line;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i >= text.size() || text[i] == '#') break;
        std::string word;
        bool in_quote = false;
        for (; i < text.size(); ++i) {
            char c = text[i];
            if (c == '"') {
                in_quote = !in_quote;
                continue;
            }
            if (!in_quote && (std::isspace(static_cast<unsigned char>(c)) || c == '#')) break;
            word += c;
        }
        if (in_quote) throw ConfigError(filename, line, "", "unterminated '\"'");
        std::size_t eq = word.find('=');
        if (eq == std::string::npos)
            throw ConfigError(filename, line, "", "expected Key=Value, found '" + word + "'");
        if (eq == 0) throw ConfigError(filename, line, "", "missing key before '=' in '" + word + "'");
        out.pairs.push_back(KeyValue{word.substr(0, eq), word.substr(eq + 1)});
    }
    return out;
}

}  // namespace

std::vector<KeyValueLine> split_key_value_lines(const std::string& text, const std::string& filename) {
    std::vector<KeyValueLine> out;
    std::istringstream in(text);
    std::string physical, logical;
    int number = 0, first = 0;
    while (std::getline(in, physical)) {
        ++number;
        if (!physical.empty() && physical.back() == '\r') physical.pop_back();
        if (logical.empty()) first = number;
        if (!physical.empty() && physical.back() == '\\') {
            physical.pop_back();
            logical += physical + " ";
            continue;
        }
        logical += physical;
        KeyValueLine l = split_line(logical, first, filename);
        if (!l.pairs.empty()) out.push_back(std::move(l));
        logical.clear();
    }
    if (!logical.empty()) {
        KeyValueLine l = split_line(logical, first, filename);
        if (!l.pairs.empty()) out.push_back(std::move(l));
    }
    return out;
}

std::string read_config_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ConfigError(path, 0, "", std::string("cannot read: ") + std::strerror(errno));
    std::ostringstream s;
    s << f.rdbuf();
    if (f.bad()) throw ConfigError(path, 0, "", "read error");
    return s.str();
}

}  // namespace harmonics
