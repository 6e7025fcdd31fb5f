// Frame encoding/decoding: the one decoder every daemon and the hook share.
#include <gtest/gtest.h>

#include <cstring>

#include "wire/address.h"
#include "wire/frame.h"
#include "wire/schedule_msg.h"

using namespace harmonics::wire;

namespace {

std::vector<std::uint8_t> encoded(const Harmonics__Envelope& env) {
    std::vector<std::uint8_t> out;
    EXPECT_TRUE(encode_frame(env, out));
    return out;
}

std::vector<std::uint8_t> report_frame(std::int64_t job, int rank, double period) {
    Harmonics__PhaseReport ph = HARMONICS__PHASE_REPORT__INIT;
    ph.start_offset_s = 0.1;
    ph.duration_s = 0.02;
    ph.has_bytes = 1;
    ph.bytes = 1 << 20;
    Harmonics__PhaseReport* phases[] = {&ph};
    Harmonics__ProfileReport r = HARMONICS__PROFILE_REPORT__INIT;
    r.job_id = job;
    r.rank = rank;
    r.period_s = period;
    r.n_phases = 1;
    r.phases = phases;
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_PROFILE_REPORT;
    env.profile_report = &r;
    return encoded(env);
}

}  // namespace

TEST(WireFrame, RoundTrip) {
    auto f = report_frame(42, 3, 0.182);
    EnvelopePtr env;
    std::size_t used = 0;
    ASSERT_EQ(decode_frame(f.data(), f.size(), kDefaultMaxFrame, &env, &used), FrameStatus::Ok);
    EXPECT_EQ(used, f.size());
    ASSERT_EQ(env->body_case, HARMONICS__ENVELOPE__BODY_PROFILE_REPORT);
    EXPECT_EQ(env->profile_report->job_id, 42);
    EXPECT_EQ(env->profile_report->rank, 3);
    EXPECT_DOUBLE_EQ(env->profile_report->period_s, 0.182);
    ASSERT_EQ(env->profile_report->n_phases, 1u);
    EXPECT_EQ(env->profile_report->phases[0]->bytes, 1u << 20);
}

// A decision through a real frame and back: what a schedd sends coordd when
// it registers, so a restarted coordd keeps a family's windows and knows a
// free rider from a plain free job (its window count comes back too).
namespace {
harmonics::JobDecision through_frame(const harmonics::JobDecision& d) {
    Harmonics__Schedule s = HARMONICS__SCHEDULE__INIT;
    fill_schedule(&s, 9, d, 4, kCoordinatorOwner);
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_SCHEDULE;
    env.schedule = &s;
    const std::vector<std::uint8_t> out = encoded(env);
    EnvelopePtr back;
    std::size_t used = 0;
    EXPECT_EQ(decode_frame(out.data(), out.size(), kDefaultMaxFrame, &back, &used), FrameStatus::Ok);
    if (!back || back->body_case != HARMONICS__ENVELOPE__BODY_SCHEDULE) return {};
    return decision_of(*back->schedule);
}
}  // namespace

TEST(WireSchedule, FamilyMembersAndFreeRidersKeepTheirMarks) {
    harmonics::JobDecision member;
    member.gated = true;
    member.period_s = 0.2;
    member.shift_s = 0.05;
    member.group = 1;
    member.groups = 3;
    const harmonics::JobDecision m = through_frame(member);
    EXPECT_TRUE(m.gated);
    EXPECT_EQ(m.group, 1);
    EXPECT_EQ(m.groups, 3);
    EXPECT_DOUBLE_EQ(m.shift_s, 0.05);
    harmonics::JobDecision rider;   // free, beside a family of three windows
    rider.groups = 3;
    const harmonics::JobDecision r = through_frame(rider);
    EXPECT_FALSE(r.gated);
    EXPECT_EQ(r.group, -1);
    EXPECT_EQ(r.groups, 3);
    // A plain free job carries no window count; nor does a gated job outside
    // a family, whatever its groups field held.
    const harmonics::JobDecision f = through_frame(harmonics::JobDecision{});
    EXPECT_EQ(f.group, -1);
    EXPECT_EQ(f.groups, 0);
    harmonics::JobDecision owned;
    owned.gated = true;
    owned.period_s = 0.1;
    owned.groups = 3;
    EXPECT_EQ(through_frame(owned).groups, 0);
}

// The share of its slack a plan holds a job to travels with the decision:
// every leaf reports against it and coordd checks it (absent: the default).
TEST(WireSchedule, APlansSlackMarginComesBack) {
    harmonics::JobDecision d;
    d.gated = true;
    d.period_s = 0.116;
    d.slack_margin = 0.9;
    EXPECT_DOUBLE_EQ(through_frame(d).slack_margin, 0.9);
    EXPECT_LT(through_frame(harmonics::JobDecision{}).slack_margin, 0);
}

TEST(WireFrame, HeaderLayout) {
    auto f = report_frame(1, 0, 1.0);
    ASSERT_GE(f.size(), kHeaderSize);
    EXPECT_EQ(f[0], 'H');
    EXPECT_EQ(f[1], 'X');
    EXPECT_EQ(f[2], kProtoVersion);
    EXPECT_EQ(f[3], 0);
    std::uint32_t len = (std::uint32_t(f[4]) << 24) | (f[5] << 16) | (f[6] << 8) | f[7];
    EXPECT_EQ(len, f.size() - kHeaderSize);
}

TEST(WireFrame, TruncatedNeedsMore) {
    auto f = report_frame(7, 1, 0.5);
    for (std::size_t n = 0; n < f.size(); ++n) {
        EnvelopePtr env;
        std::size_t used = 0;
        EXPECT_EQ(decode_frame(f.data(), n, kDefaultMaxFrame, &env, &used), FrameStatus::NeedMore) << n;
        EXPECT_FALSE(env);
    }
}

TEST(WireFrame, BadMagicVersionFlags) {
    auto f = report_frame(7, 1, 0.5);
    EnvelopePtr env;
    std::size_t used = 0;
    auto g = f;
    g[0] = 'G';
    EXPECT_EQ(decode_frame(g.data(), g.size(), kDefaultMaxFrame, &env, &used), FrameStatus::BadMagic);
    // Garbage is refused from its first byte, before a whole header arrives.
    EXPECT_EQ(decode_frame(g.data(), 1, kDefaultMaxFrame, &env, &used), FrameStatus::BadMagic);
    g = f;
    g[2] = kProtoVersion + 1;
    EXPECT_EQ(decode_frame(g.data(), g.size(), kDefaultMaxFrame, &env, &used), FrameStatus::BadVersion);
    g = f;
    g[3] = 1;
    EXPECT_EQ(decode_frame(g.data(), g.size(), kDefaultMaxFrame, &env, &used), FrameStatus::BadFlags);
}

TEST(WireFrame, OversizedRefusedFromHeader) {
    std::uint8_t h[kHeaderSize] = {'H', 'X', kProtoVersion, 0, 0x7f, 0xff, 0xff, 0xff};
    EnvelopePtr env;
    std::size_t used = 0;
    EXPECT_EQ(decode_frame(h, sizeof h, kDefaultMaxFrame, &env, &used), FrameStatus::TooLarge);
    auto f = report_frame(7, 1, 0.5);
    std::uint32_t small = std::uint32_t(f.size() - kHeaderSize - 1);
    EXPECT_EQ(decode_frame(f.data(), f.size(), small, &env, &used), FrameStatus::TooLarge);
}

TEST(WireFrame, EncoderRespectsLimit) {
    std::string big(2000, 'x');
    Harmonics__Error e = HARMONICS__ERROR__INIT;
    e.reason = const_cast<char*>(big.c_str());
    Harmonics__Envelope env = HARMONICS__ENVELOPE__INIT;
    env.body_case = HARMONICS__ENVELOPE__BODY_ERROR;
    env.error = &e;
    std::vector<std::uint8_t> out = {1, 2, 3};
    EXPECT_FALSE(encode_frame(env, out, 1000));
    EXPECT_EQ(out.size(), 3u);
    EXPECT_TRUE(encode_frame(env, out, 4000));
}

TEST(WireFrame, GarbagePayloadAndEmptyEnvelope) {
    std::uint8_t f[kHeaderSize + 4] = {'H', 'X', kProtoVersion, 0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff};
    EnvelopePtr env;
    std::size_t used = 0;
    EXPECT_EQ(decode_frame(f, sizeof f, kDefaultMaxFrame, &env, &used), FrameStatus::BadPayload);
    std::uint8_t empty[kHeaderSize] = {'H', 'X', kProtoVersion, 0, 0, 0, 0, 0};
    EXPECT_EQ(decode_frame(empty, sizeof empty, kDefaultMaxFrame, &env, &used), FrameStatus::BadPayload);
}

TEST(WireFrame, FieldNumberZeroIsGarbageEvenNested) {
    // A profile report whose nested message holds field 0 spelt 0x80 0x00
    // (found by the fuzzer): protobuf-c keeps it as an unknown field and
    // would write it back as a tag it refuses. It is refused on the way in.
    const std::vector<std::uint8_t> f = {
        'H', 'X', 1, 0, 0, 0, 0, 0x23, 0x5a, 0x21, 0x08, 0x07, 0x10, 0x01, 0x21, 0x08, 0xae, 0x47,
        0xe1, 0x01, 0x01, 0x00, 0x60, 0x80, 0x00, 0x40, 0x85, 0x34, 0x6f, 0x6f, 0x99, 0x99, 0x99, 0xb9,
        0x3f, 0x11, 0x7b, 0x14, 0xb3, 0x47, 0xe1, 0x7a, 0x94};
    EnvelopePtr env;
    std::size_t used = 0;
    EXPECT_EQ(decode_frame(f.data(), f.size(), 4096, &env, &used), FrameStatus::BadPayload);
    // The same frame with a real (unknown) field number instead still decodes:
    // a newer peer's additions are kept, not refused.
    std::vector<std::uint8_t> g = f;
    g[23] = 0xf8;  // 0xf8 0x00: field 15, wire type 0, spelt the same non-minimal way
    EXPECT_EQ(decode_frame(g.data(), g.size(), 4096, &env, &used), FrameStatus::Ok);
}

TEST(WireFrame, DecoderByteByByteAndBackToBack) {
    std::vector<std::uint8_t> stream;
    for (int i = 0; i < 5; ++i) {
        auto f = report_frame(100 + i, i, 0.1 * (i + 1));
        stream.insert(stream.end(), f.begin(), f.end());
    }
    FrameDecoder dec;
    int got = 0;
    for (std::uint8_t b : stream) {
        dec.feed(&b, 1);
        EnvelopePtr env;
        FrameStatus st;
        while ((st = dec.next(&env)) == FrameStatus::Ok) {
            EXPECT_EQ(env->profile_report->job_id, 100 + got);
            ++got;
        }
        ASSERT_EQ(st, FrameStatus::NeedMore);
    }
    EXPECT_EQ(got, 5);
    EXPECT_EQ(dec.buffered(), 0u);
}

TEST(WireAddress, Forms) {
    Address a;
    std::string err;
    ASSERT_TRUE(parse_address("127.0.0.1:6828", &a, &err));
    EXPECT_FALSE(a.is_unix);
    EXPECT_EQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, 6828);
    ASSERT_TRUE(parse_address("[::1]:7000", &a, &err));
    EXPECT_EQ(a.host, "::1");
    ASSERT_TRUE(parse_address("/run/harmonics/coordd.sock", &a, &err));
    EXPECT_TRUE(a.is_unix);
    EXPECT_FALSE(parse_address("localhost", &a, &err));
    EXPECT_NE(err.find("no port"), std::string::npos);
    EXPECT_FALSE(parse_address("h:99999", &a, &err));
    EXPECT_FALSE(parse_address("h:12x", &a, &err));
    // The grammar of util/host_port.h: a bare IPv6 host is ambiguous.
    EXPECT_FALSE(parse_address("::1:7000", &a, &err));
    EXPECT_NE(err.find("brackets"), std::string::npos) << err;
    ASSERT_TRUE(parse_address(":6828", &a, &err));  // listen on every address
    EXPECT_EQ(a.host, "0.0.0.0");
    EXPECT_EQ(a.port, 6828);
}
