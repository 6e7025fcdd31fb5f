// libFuzzer target for the frame decoder every daemon runs on untrusted input.
// Invariants: no crash or leak on any byte string; the incremental decoder
// agrees with the one-shot decoder however the bytes are split; a decoded
// envelope re-encodes to a frame that decodes again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "wire/frame.h"

using namespace harmonics::wire;

namespace {
void check(bool ok) {
    if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::uint32_t max_frame = 4096;   // small, so "too large" is reachable
    // One shot.
    std::vector<FrameStatus> one;
    std::vector<std::vector<std::uint8_t>> packed;
    std::size_t off = 0;
    for (;;) {
        EnvelopePtr env;
        std::size_t used = 0;
        FrameStatus st = decode_frame(data + off, size - off, max_frame, &env, &used);
        one.push_back(st);
        if (st != FrameStatus::Ok) break;
        check(used >= kHeaderSize && used <= size - off);
        off += used;
        std::vector<std::uint8_t> again;
        check(encode_frame(*env, again, 1u << 20));
        EnvelopePtr env2;
        std::size_t used2 = 0;
        check(decode_frame(again.data(), again.size(), 1u << 20, &env2, &used2) == FrameStatus::Ok);
        check(used2 == again.size());
        packed.push_back(std::move(again));
    }
    // Incremental, in chunks whose sizes come from the data itself.
    FrameDecoder dec(max_frame);
    std::vector<FrameStatus> inc;
    std::size_t pos = 0, step = size ? (data[0] % 7) + 1 : 1;
    FrameStatus last = FrameStatus::NeedMore;
    while (pos < size && (last == FrameStatus::Ok || last == FrameStatus::NeedMore)) {
        std::size_t n = std::min(step, size - pos);
        dec.feed(data + pos, n);
        pos += n;
        for (;;) {
            EnvelopePtr env;
            last = dec.next(&env);
            if (last != FrameStatus::Ok) break;
            inc.push_back(last);
        }
        if (last != FrameStatus::NeedMore) inc.push_back(last);
        check(dec.buffered() <= size);
    }
    if (last == FrameStatus::NeedMore) inc.push_back(last);
    check(inc == one);
    return 0;
}
