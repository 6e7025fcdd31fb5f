// MUNGE credentials for the Hello frame. The client encodes a credential whose
// payload is kHelloPayload; the server decodes it through its own munged,
// learns the peer's uid/gid and refuses any other payload (a credential made
// for another MUNGE service is not a Hello). munged refuses a replayed or expired credential,
// so a captured Hello cannot be reused. `socket` empty = libmunge's default.
#pragma once

#include <cstdint>
#include <string>

namespace harmonics::wire {

inline constexpr const char* kHelloPayload = "harmonics-hello";

struct MungeIdentity {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::string payload;
};

// True when this build has libmunge.
bool munge_available();

// Encodes a credential carrying `payload`. On failure returns false and sets *err.
bool munge_encode(const std::string& socket, const std::string& payload, std::string* cred,
                  std::string* err);

// Decodes and verifies `cred`. On failure returns false and sets *err to
// libmunge's reason (expired, replayed, invalid, ...).
bool munge_decode(const std::string& socket, const std::string& cred, MungeIdentity* id,
                  std::string* err);

}  // namespace harmonics::wire
