// Framing of the Harmonics wire protocol. A frame is an 8-byte header and one
// protobuf-c encoded harmonics.Envelope:
//
//   byte 0-1  magic 'H' 'X'      (rejects a peer speaking something else)
//   byte 2    protocol version   (kProtoVersion; anything else is refused)
//   byte 3    flags, must be 0   (room for compression later)
//   byte 4-7  payload length, big endian, at most the reader's max_frame
//
// The functions here touch only memory (no sockets), so the daemons, the NCCL
// hook and the fuzzer share exactly the same decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/common/proto/harmonics.pb-c.h"

namespace harmonics::wire {

constexpr std::uint8_t kProtoVersion = 1;
constexpr std::size_t kHeaderSize = 8;
constexpr std::uint32_t kDefaultMaxFrame = 1u << 20;   // 1 MiB

enum class FrameStatus {
    Ok,           // a complete frame was decoded
    NeedMore,     // not enough bytes yet
    BadMagic,     // not a Harmonics frame
    BadVersion,   // protocol version we do not speak
    BadFlags,     // reserved flags set
    TooLarge,     // announced length above the reader's max_frame
    BadPayload,   // protobuf could not unpack, or empty envelope
};
const char* frame_status_name(FrameStatus s);

// Owned envelope, freed with protobuf-c's unpack-free.
struct EnvelopeFree {
    void operator()(Harmonics__Envelope* e) const;
};
using EnvelopePtr = std::unique_ptr<Harmonics__Envelope, EnvelopeFree>;

// Appends one frame carrying `env` to `out`. Returns false (and leaves `out`
// unchanged) when the encoded envelope would exceed max_frame.
bool encode_frame(const Harmonics__Envelope& env, std::vector<std::uint8_t>& out,
                  std::uint32_t max_frame = kDefaultMaxFrame);

// Checks a header. On Ok, *payload_len is the length that follows it.
FrameStatus parse_header(const std::uint8_t* p, std::size_t n, std::uint32_t max_frame,
                         std::uint32_t* payload_len);

// Decodes the first frame in [p, p+n). On Ok, *env holds the envelope and
// *consumed the bytes used. Any status other than Ok/NeedMore is fatal for
// the connection: the stream cannot be resynchronised.
FrameStatus decode_frame(const std::uint8_t* p, std::size_t n, std::uint32_t max_frame,
                         EnvelopePtr* env, std::size_t* consumed);

// Incremental decoder for a byte stream: feed() what the socket gave, then
// call next() until it returns NeedMore. Buffers at most one frame
// (header + max_frame bytes), so a peer cannot make it grow without bound.
class FrameDecoder {
public:
    explicit FrameDecoder(std::uint32_t max_frame = kDefaultMaxFrame) : max_frame_(max_frame) {}
    void feed(const std::uint8_t* p, std::size_t n);
    FrameStatus next(EnvelopePtr* env);
    std::size_t buffered() const { return buf_.size() - off_; }
    std::uint32_t max_frame() const { return max_frame_; }

private:
    std::uint32_t max_frame_;
    std::vector<std::uint8_t> buf_;
    std::size_t off_ = 0;
};

}  // namespace harmonics::wire
