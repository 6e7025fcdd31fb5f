// Slurm hostlist expressions: "n[1-4,7]", "rack[01-16]" (zero padding kept),
// "n1,n[3-5]", "a[1-2]b[3-4]" (several brackets = the cross product). Both
// topology.conf and Slurm's job node lists are written this way.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace harmonics {

// A malformed expression; what() says what is wrong and quotes the input.
class HostlistError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// Every host name in the expression, in the order written (duplicates kept).
// Throws HostlistError for an empty name, an unbalanced bracket, a range whose
// start is after its end, a non-numeric range or one over kMaxHosts names.
std::vector<std::string> expand_hostlist(const std::string& expr);

// The shortest usual form: names sharing a prefix and padding become one
// bracket ("n1,n2,n3,n7" -> "n[1-3,7]"). Order of first appearance is kept
// between prefixes; numbers within a bracket are sorted, duplicates dropped.
// expand_hostlist(compress_hostlist(v)) has the same set of names as v.
std::string compress_hostlist(const std::vector<std::string>& hosts);

// Upper bound on the names one expression may expand to (guards "n[1-999999999]").
constexpr std::size_t kMaxHosts = 1u << 20;

}  // namespace harmonics
