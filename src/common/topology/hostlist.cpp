#include "topology/hostlist.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

namespace harmonics {
namespace {

[[noreturn]] void fail(const std::string& expr, const std::string& problem) {
    throw HostlistError("bad hostlist '" + expr + "': " + problem);
}

// One numeric range inside brackets, with the zero padding of its start.
struct Range {
    unsigned long long lo, hi;
    std::size_t width;
};

bool all_digits(const std::string& s) {
    return !s.empty() && s.size() <= 18 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string pad(unsigned long long v, std::size_t width) {
    std::string s = std::to_string(v);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    return s;
}

// "1-4,7,01-03" -> ranges.
std::vector<Range> parse_ranges(const std::string& expr, const std::string& body) {
    if (body.empty()) fail(expr, "empty brackets");
    std::vector<Range> out;
    std::size_t pos = 0;
    while (pos <= body.size()) {
        std::size_t comma = body.find(',', pos);
        if (comma == std::string::npos) comma = body.size();
        std::string item = body.substr(pos, comma - pos);
        if (item.empty()) fail(expr, "empty range in '[" + body + "]'");
        std::size_t dash = item.find('-');
        std::string lo = item.substr(0, dash);
        std::string hi = dash == std::string::npos ? lo : item.substr(dash + 1);
        if (!all_digits(lo) || !all_digits(hi))
            fail(expr, "range '" + item + "' is not a number or number-number");
        Range r{std::stoull(lo), std::stoull(hi), lo.size()};
        if (r.lo > r.hi) fail(expr, "range '" + item + "' starts after it ends");
        out.push_back(r);
        pos = comma + 1;
    }
    return out;
}

// One comma-free term such as "a[1-2]b[3-4]c": the cross product of its brackets.
void expand_term(const std::string& expr, const std::string& term, std::vector<std::string>* out) {
    if (term.empty()) fail(expr, "empty host name");
    std::vector<std::string> partial{""};
    std::size_t pos = 0;
    while (pos < term.size()) {
        std::size_t open = term.find('[', pos);
        std::size_t close_before = term.find(']', pos);
        if (close_before != std::string::npos && (open == std::string::npos || close_before < open))
            fail(expr, "']' without '['");
        std::string literal = term.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
        for (std::string& p : partial) p += literal;
        if (open == std::string::npos) break;
        std::size_t close = term.find(']', open);
        if (close == std::string::npos) fail(expr, "'[' without ']'");
        std::string body = term.substr(open + 1, close - open - 1);
        if (body.find('[') != std::string::npos) fail(expr, "nested '['");
        std::vector<Range> ranges = parse_ranges(expr, body);
        std::vector<std::string> next;
        for (const std::string& p : partial)
            for (const Range& r : ranges) {
                if (out->size() + next.size() + (r.hi - r.lo) >= kMaxHosts)
                    fail(expr, "more than " + std::to_string(kMaxHosts) + " hosts");
                for (unsigned long long v = r.lo; v <= r.hi; ++v) next.push_back(p + pad(v, r.width));
            }
        partial.swap(next);
        pos = close + 1;
    }
    for (std::string& p : partial) out->push_back(std::move(p));
    if (out->size() > kMaxHosts) fail(expr, "more than " + std::to_string(kMaxHosts) + " hosts");
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& expr) {
    if (expr.empty()) fail(expr, "empty");
    for (unsigned char c : expr)
        if (std::isspace(c) || !std::isprint(c)) fail(expr, "contains a space or control character");
    std::vector<std::string> out;
    // Split at commas outside brackets.
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        if (i < expr.size() && expr[i] == '[') ++depth;
        else if (i < expr.size() && expr[i] == ']') depth = depth > 0 ? depth - 1 : 0;
        else if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
            expand_term(expr, expr.substr(start, i - start), &out);
            start = i + 1;
        }
    }
    return out;
}

namespace {

// A host name split into prefix, trailing number and its padding.
struct Split {
    std::string prefix;
    unsigned long long number = 0;
    std::size_t digits = 0;  // 0: no trailing number
    bool padded = false;     // a leading zero fixes the width
};

Split split_name(const std::string& name) {
    Split s;
    std::size_t i = name.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
    std::string num = name.substr(i);
    if (num.empty() || num.size() > 18 || name.find_first_of("[],") != std::string::npos) {
        s.prefix = name;
        return s;
    }
    s.prefix = name.substr(0, i);
    s.number = std::stoull(num);
    s.digits = num.size();
    s.padded = num.size() > 1 && num[0] == '0';
    return s;
}

struct Group {
    std::string prefix;
    std::size_t width;  // 0: unpadded
    std::vector<unsigned long long> numbers;
};

std::string format_group(Group& g) {
    std::sort(g.numbers.begin(), g.numbers.end());
    g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
    if (g.numbers.size() == 1) return g.prefix + pad(g.numbers[0], g.width);
    std::string out = g.prefix + "[";
    for (std::size_t i = 0; i < g.numbers.size();) {
        std::size_t j = i;
        while (j + 1 < g.numbers.size() && g.numbers[j + 1] == g.numbers[j] + 1) ++j;
        if (i > 0) out += ",";
        out += pad(g.numbers[i], g.width);
        if (j > i) out += "-" + pad(g.numbers[j], g.width);
        i = j + 1;
    }
    return out + "]";
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& hosts) {
    std::vector<Split> splits;
    splits.reserve(hosts.size());
    // Widths in use per prefix, so "n10" joins "n[01-09]" rather than starting a group.
    std::map<std::string, std::vector<std::size_t>> padded_widths;
    for (const std::string& h : hosts) {
        splits.push_back(split_name(h));
        const Split& s = splits.back();
        if (s.padded) padded_widths[s.prefix].push_back(s.digits);
    }
    std::vector<Group> groups;
    std::vector<std::string> plain;  // names without a number, kept as written
    std::map<std::pair<std::string, std::size_t>, std::size_t> index;
    std::vector<std::pair<bool, std::size_t>> order;  // (is group, index) in first appearance order
    for (const Split& s : splits) {
        if (s.digits == 0) {
            if (std::find(plain.begin(), plain.end(), s.prefix) == plain.end()) {
                order.push_back({false, plain.size()});
                plain.push_back(s.prefix);
            }
            continue;
        }
        std::size_t width = 0;
        if (s.padded) {
            width = s.digits;
        } else {
            auto it = padded_widths.find(s.prefix);
            if (it != padded_widths.end() &&
                std::find(it->second.begin(), it->second.end(), s.digits) != it->second.end())
                width = s.digits;
        }
        auto key = std::make_pair(s.prefix, width);
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, groups.size()).first;
            order.push_back({true, groups.size()});
            groups.push_back(Group{s.prefix, width, {}});
        }
        groups[it->second].numbers.push_back(s.number);
    }
    std::string out;
    for (const auto& o : order) {
        if (!out.empty()) out += ",";
        out += o.first ? format_group(groups[o.second]) : plain[o.second];
    }
    return out;
}

}  // namespace harmonics
