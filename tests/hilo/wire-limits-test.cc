// Size limits of the wire format: frames hold at most INT_MAX body bytes (Protobuf's own limit),
// every encoder refuses a message over its limit with a Status naming the sizes (never an empty
// frame), and an adapter whose snapshot cannot fit in one frame is refused when the publisher is
// created. Limits are lowered through the options so that nothing here allocates gigabytes.
#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"
#include "hilo/sync/publisher.h"
#include "hilo/wire/messages.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <climits>
#include <limits>

namespace hilo
{
namespace
{

// A frame header declaring `length` body bytes (no body follows).
std::string
HeaderDeclaring(uint64_t length)
{
    std::string h;
    ByteWriter w(&h);
    w.PutBytes("HLO1", 4);
    w.PutU8(static_cast<uint8_t>(FrameKind::kUpdate));
    w.PutU8(0);
    w.PutU16(0);
    w.PutU64(length);
    w.PutU32(0);
    return h;
}

struct Tiny
{
    AdapterLayout layout = AdapterLayout::Create({{"a", 1, 2}, {"b", 2, 1}}).value();
    OptimizerConfig opt;
    AdapterState init;

    Tiny() { init.theta = {0.5f, -0.25f, 0.0f, 0.0f}; }

    SyncSpec Spec(SyncKind kind) const
    {
        SyncSpec spec;
        spec.kind = kind;
        spec.compressor = "dense";
        spec.compressor_options = {{"dtype", "fp32"}};
        return spec;
    }
};

wire::Update
SomeUpdate()
{
    wire::Update u;
    u.set_format_version(kFormatVersion);
    u.set_version(8);
    u.set_base_version(7);
    u.set_strategy(wire::SYNC_KIND_HILO);
    u.set_compressor("dense-v1");
    u.set_payload(std::string(100, '\x5a'));
    u.set_state_hash(0x0123456789abcdefULL);
    return u;
}

TEST(WireLimits, FrameLimitIsProtobufsIntLimit)
{
    EXPECT_EQ(kMaxFrameBody, static_cast<uint64_t>(INT_MAX));
    EXPECT_EQ(kDefaultMaxFrameBody, kMaxFrameBody);
}

TEST(WireLimits, ReceiverCapsEveryLimitAtIntMax)
{
    // A length Protobuf can still parse passes even with a larger limit requested...
    StatusOr<uint64_t> at_limit = PeekFrameBodyLength(HeaderDeclaring(kMaxFrameBody), UINT64_MAX);
    ASSERT_TRUE(at_limit.ok()) << at_limit.status().ToString();
    EXPECT_EQ(*at_limit, kMaxFrameBody);
    // ...one byte more is corrupt whatever limit the caller passed (the old 4 GiB default here).
    for (uint64_t requested : {uint64_t{1} << 32, UINT64_MAX})
    {
        StatusOr<uint64_t> over =
            PeekFrameBodyLength(HeaderDeclaring(kMaxFrameBody + 1), requested);
        ASSERT_FALSE(over.ok());
        EXPECT_EQ(over.status().code(), StatusCode::kCorruption);
        EXPECT_NE(over.status().message().find("2147483647"), std::string::npos)
            << over.status().message();
    }
    // A lower limit still applies as given.
    EXPECT_EQ(PeekFrameBodyLength(HeaderDeclaring(11), 10).status().code(),
              StatusCode::kCorruption);
    EXPECT_TRUE(PeekFrameBodyLength(HeaderDeclaring(10), 10).ok());
}

TEST(WireLimits, EncodeFrameRefusesBodiesOverTheLimit)
{
    EXPECT_TRUE(EncodeFrame(FrameKind::kUpdate, "abcd", 4).ok());
    StatusOr<std::string> over = EncodeFrame(FrameKind::kUpdate, "abcde", 4);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(over.status().message().find("5 bytes"), std::string::npos);
}

TEST(WireLimits, EncodeFrameRefusesA2GiBBodyWithoutReadingIt)
{
    // 2^31 bytes of address space that cannot be read: the size check must come first.
    const size_t size = size_t{1} << 31;
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    StatusOr<std::string> framed =
        EncodeFrame(FrameKind::kSnapshot, std::string_view(static_cast<const char*>(p), size),
                    /*max_body=*/UINT64_MAX);
    munmap(p, size);
    ASSERT_FALSE(framed.ok());
    EXPECT_EQ(framed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(framed.status().message().find("2147483648 bytes"), std::string::npos)
        << framed.status().message();
}

TEST(WireLimits, UpdateOverTheLimitIsAnErrorNotAnEmptyFrame)
{
    const wire::Update u = SomeUpdate();
    const uint64_t body = u.ByteSizeLong();
    StatusOr<std::string> fits = EncodeUpdateFrame(u, body);
    ASSERT_TRUE(fits.ok()) << fits.status().ToString();
    EXPECT_EQ(fits->size(), kFrameHeaderBytes + body);
    StatusOr<wire::Update> back = DecodeUpdateFrame(*fits);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->payload(), u.payload());

    StatusOr<std::string> over = EncodeUpdateFrame(u, body - 1);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(over.status().message().find("Update body of " + std::to_string(body) + " bytes"),
              std::string::npos)
        << over.status().message();
}

TEST(WireLimits, SnapshotBoundIsExactForTheWidestState)
{
    ReplicatedState s;
    s.adapter.theta = {1.0f, 2.0f, 3.0f};
    s.optimizer.m = {0.5f, 0.25f, 0.125f};
    s.optimizer.v = {4.0f, 8.0f, 16.0f};
    s.adapter.version = UINT64_MAX;
    s.optimizer.step = UINT64_MAX;
    s.optimizer.beta1_prod = 0.9f;
    s.optimizer.beta2_prod = 0.999f;
    const uint64_t bound = SnapshotBodyBytesBound(3, 3, 3);
    StatusOr<std::string> frame = EncodeSnapshotFrame(s, /*config_hash=*/UINT64_MAX);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    EXPECT_EQ(frame->size() - kFrameHeaderBytes, bound);

    // Narrower states stay below the bound; empty moments take no bytes at all.
    s.adapter.version = 1;
    s.optimizer.step = 1;
    frame = EncodeSnapshotFrame(s, /*config_hash=*/7);
    ASSERT_TRUE(frame.ok());
    EXPECT_LE(frame->size() - kFrameHeaderBytes, bound);
    EXPECT_EQ(SnapshotBodyBytesBound(3, 0, 0) + 2 * (1 + 1 + 12), bound);
    EXPECT_EQ(SnapshotBodyBytesBound(0, 0, 0), 52u); // the scalar fields, as FORMAT.md states
}

TEST(WireLimits, SnapshotBoundAtAdapterScale)
{
    // The 161.5M-parameter rank-64 layout with AdamW moments still fits one frame; 180M does not.
    const uint64_t fits = 161'500'000;
    EXPECT_EQ(SnapshotBodyBytesBound(fits, fits, fits), 1'938'000'070u);
    const uint64_t too_big = 180'000'000;
    EXPECT_GT(SnapshotBodyBytesBound(too_big, too_big, too_big), kMaxFrameBody);
    EXPECT_LE(SnapshotBodyBytesBound(too_big, 0, 0), kMaxFrameBody);
    // Absurd counts saturate instead of wrapping round to a small number.
    EXPECT_EQ(SnapshotBodyBytesBound(UINT64_MAX / 2, 0, 0), UINT64_MAX);
}

TEST(WireLimits, SnapshotOverTheLimitIsRefusedBeforeCopying)
{
    ReplicatedState s;
    s.adapter.theta.assign(16, 1.0f);
    const uint64_t bound = SnapshotBodyBytesBound(16, 0, 0);
    EXPECT_TRUE(EncodeSnapshotFrame(s, 1, bound).ok());
    StatusOr<std::string> over = EncodeSnapshotFrame(s, 1, bound - 1);
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(over.status().message().find("16 parameters"), std::string::npos)
        << over.status().message();
}

TEST(WireLimits, PublisherRefusesAnAdapterWhoseSnapshotCannotFit)
{
    Tiny t;
    const uint64_t hilo_bound = SnapshotBodyBytesBound(4, 4, 4);
    PublisherOptions options;
    options.max_frame_body = hilo_bound - 1;
    auto refused = Publisher::Create(t.Spec(SyncKind::kHilo), t.layout, t.opt, t.init, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("snapshot"), std::string::npos);
    EXPECT_NE(refused.status().message().find(std::to_string(hilo_bound)), std::string::npos)
        << refused.status().message();

    options.max_frame_body = hilo_bound;
    auto p = Publisher::Create(t.Spec(SyncKind::kHilo), t.layout, t.opt, t.init, options);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_TRUE((*p)->LatestSnapshotFrame().ok());
}

TEST(WireLimits, PublisherLimitMustBeAFrameLimit)
{
    Tiny t;
    for (uint64_t bad : {uint64_t{0}, kMaxFrameBody + 1})
    {
        PublisherOptions options;
        options.max_frame_body = bad;
        auto p = Publisher::Create(t.Spec(SyncKind::kHilo), t.layout, t.opt, t.init, options);
        ASSERT_FALSE(p.ok());
        EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
        EXPECT_NE(p.status().message().find("max_frame_body"), std::string::npos);
    }
}

TEST(WireLimits, UnframeableUpdateStopsThePublisherForGood)
{
    // `delta` snapshots hold theta only, while its top-k updates carry every value plus indices,
    // names and hashes: a limit can admit the snapshot but not the update.
    Tiny t;
    SyncSpec spec = t.Spec(SyncKind::kDelta);
    spec.compressor = "topk";
    spec.compressor_options = {{"dtype", "fp32"}};
    const std::vector<float> grad = {1.0f, -2.0f, 0.5f, 0.125f};
    PublisherOptions options;
    options.max_frame_body = SnapshotBodyBytesBound(4, 0, 0);
    {
        auto unlimited = Publisher::Create(spec, t.layout, t.opt, t.init).value();
        ASSERT_GT(unlimited->Step(grad).value().frame.size() - kFrameHeaderBytes,
                  options.max_frame_body);
    }
    auto created = Publisher::Create(spec, t.layout, t.opt, t.init, options);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    Publisher& p = **created;
    StatusOr<PublishedUpdate> u = p.Step(grad);
    ASSERT_FALSE(u.ok());
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(u.status().message().find("cannot be published"), std::string::npos)
        << u.status().message();
    // Nothing half-published: every later call reports the same failure.
    EXPECT_EQ(p.Step(grad).status().message(), u.status().message());
    EXPECT_EQ(p.CatchUpFrom(0).status().message(), u.status().message());
    EXPECT_EQ(p.LatestSnapshotFrame().status().message(), u.status().message());
}

} // namespace
} // namespace hilo
