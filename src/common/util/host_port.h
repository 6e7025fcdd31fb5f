// "host:port" as harmonics.conf, command lines and the wire client write an
// address: one grammar for all of them. An IPv6 host goes in brackets
// ("[::1]:6829"); a bare one would be ambiguous.
#pragma once

#include <string>

namespace harmonics {

// "host:port" -> parts; port 1..65535, host non-empty. False with *why (when
// given) saying what is wrong, for the caller to prefix with where the
// address came from (file, line and key; a command-line option).
bool split_host_port(const std::string& addr, std::string* host, int* port, std::string* why = nullptr);

}  // namespace harmonics
