#include "wire/frame.h"

#include <cstring>

namespace harmonics::wire {

const char* frame_status_name(FrameStatus s) {
    switch (s) {
    case FrameStatus::Ok: return "ok";
    case FrameStatus::NeedMore: return "truncated";
    case FrameStatus::BadMagic: return "bad magic";
    case FrameStatus::BadVersion: return "wrong protocol version";
    case FrameStatus::BadFlags: return "reserved flags set";
    case FrameStatus::TooLarge: return "frame too large";
    case FrameStatus::BadPayload: return "undecodable payload";
    }
    return "?";
}

namespace {

// protobuf-c accepts a field number 0 spelt as a non-minimal varint (0x80
// 0x00) and keeps it as an unknown field, which it would then write back as
// 0x00, a tag it refuses. Field 0 is invalid protobuf: such a message is
// garbage, whatever else it holds. Unknown fields with real numbers stay
// (a newer peer's additions).
bool has_field_zero(const ProtobufCMessage* m) {
    for (unsigned i = 0; i < m->n_unknown_fields; ++i)
        if (m->unknown_fields[i].tag == 0) return true;
    const ProtobufCMessageDescriptor* d = m->descriptor;
    const char* base = reinterpret_cast<const char*>(m);
    for (unsigned f = 0; f < d->n_fields; ++f) {
        const ProtobufCFieldDescriptor& fd = d->fields[f];
        if (fd.type != PROTOBUF_C_TYPE_MESSAGE) continue;
        if (fd.label == PROTOBUF_C_LABEL_REPEATED) {
            const std::size_t n = *reinterpret_cast<const std::size_t*>(base + fd.quantifier_offset);
            auto* const* v = *reinterpret_cast<ProtobufCMessage* const* const*>(base + fd.offset);
            for (std::size_t k = 0; k < n; ++k)
                if (v[k] && has_field_zero(v[k])) return true;
        } else {
            // A oneof member other than the one set shares the storage: skip it.
            if ((fd.flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *reinterpret_cast<const std::uint32_t*>(base + fd.quantifier_offset) != fd.id)
                continue;
            auto* sub = *reinterpret_cast<ProtobufCMessage* const*>(base + fd.offset);
            if (sub && has_field_zero(sub)) return true;
        }
    }
    return false;
}

}  // namespace

void EnvelopeFree::operator()(Harmonics__Envelope* e) const {
    if (e) harmonics__envelope__free_unpacked(e, nullptr);
}

bool encode_frame(const Harmonics__Envelope& env, std::vector<std::uint8_t>& out,
                  std::uint32_t max_frame) {
    std::size_t len = harmonics__envelope__get_packed_size(&env);
    if (len > max_frame) return false;
    std::size_t at = out.size();
    out.resize(at + kHeaderSize + len);
    std::uint8_t* h = out.data() + at;
    h[0] = 'H';
    h[1] = 'X';
    h[2] = kProtoVersion;
    h[3] = 0;
    h[4] = std::uint8_t(len >> 24);
    h[5] = std::uint8_t(len >> 16);
    h[6] = std::uint8_t(len >> 8);
    h[7] = std::uint8_t(len);
    harmonics__envelope__pack(&env, h + kHeaderSize);
    return true;
}

FrameStatus parse_header(const std::uint8_t* p, std::size_t n, std::uint32_t max_frame,
                         std::uint32_t* payload_len) {
    // Check each byte as soon as it is there: garbage is refused before a
    // whole header has arrived.
    if (n >= 1 && p[0] != 'H') return FrameStatus::BadMagic;
    if (n >= 2 && p[1] != 'X') return FrameStatus::BadMagic;
    if (n >= 3 && p[2] != kProtoVersion) return FrameStatus::BadVersion;
    if (n >= 4 && p[3] != 0) return FrameStatus::BadFlags;
    if (n < kHeaderSize) return FrameStatus::NeedMore;
    std::uint32_t len = (std::uint32_t(p[4]) << 24) | (std::uint32_t(p[5]) << 16) |
                        (std::uint32_t(p[6]) << 8) | std::uint32_t(p[7]);
    if (len > max_frame) return FrameStatus::TooLarge;
    *payload_len = len;
    return FrameStatus::Ok;
}

FrameStatus decode_frame(const std::uint8_t* p, std::size_t n, std::uint32_t max_frame,
                         EnvelopePtr* env, std::size_t* consumed) {
    std::uint32_t len = 0;
    FrameStatus st = parse_header(p, n, max_frame, &len);
    if (st != FrameStatus::Ok) return st;
    if (n - kHeaderSize < len) return FrameStatus::NeedMore;
    Harmonics__Envelope* e = harmonics__envelope__unpack(nullptr, len, p + kHeaderSize);
    if (!e) return FrameStatus::BadPayload;
    EnvelopePtr owned(e);
    // An envelope with no body (or a body number from a newer peer) carries
    // nothing we can act on.
    if (e->body_case == HARMONICS__ENVELOPE__BODY__NOT_SET) return FrameStatus::BadPayload;
    if (has_field_zero(&e->base)) return FrameStatus::BadPayload;
    *env = std::move(owned);
    *consumed = kHeaderSize + len;
    return FrameStatus::Ok;
}

void FrameDecoder::feed(const std::uint8_t* p, std::size_t n) {
    if (off_ > 0 && off_ == buf_.size()) {
        buf_.clear();
        off_ = 0;
    } else if (off_ > 4096 && off_ * 2 > buf_.size()) {
        buf_.erase(buf_.begin(), buf_.begin() + std::ptrdiff_t(off_));
        off_ = 0;
    }
    buf_.insert(buf_.end(), p, p + n);
}

FrameStatus FrameDecoder::next(EnvelopePtr* env) {
    std::size_t used = 0;
    FrameStatus st = decode_frame(buf_.data() + off_, buf_.size() - off_, max_frame_, env, &used);
    if (st == FrameStatus::Ok) off_ += used;
    return st;
}

}  // namespace harmonics::wire
