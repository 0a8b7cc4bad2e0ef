// Every error path of the replica returns the right typed error and leaves its state exactly as
// it was: truncated and corrupt frames, wrong base version, duplicates, gaps (then catch-up from
// snapshot + ring), config mismatches, absurd sizes, hash mismatches.
#include "hilo/core/crc32c.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "hilo/wire/messages.h"
#include "tests/hilo/dense-hilo-fixture.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <cstring>

namespace hilo
{
namespace
{

class ReplicaErrors : public testing::DenseHiloFixture
{
  protected:
    void SetUp() override
    {
        DenseHiloFixture::SetUp();
        replica = Replica::Create(spec, layout, opt, init).value();
    }

    using DenseHiloFixture::Publish;
    PublishedUpdate Publish() { return Publish(publisher.get(), &rng); }

    // Snapshot of the replica's observable state.
    struct Seen
    {
        uint64_t version;
        uint64_t hash;
        uint64_t opt_hash;
        std::vector<float> theta;
    };
    Seen Look() const
    {
        const ReplicatedState& s = replica->state();
        return {s.adapter.version, s.adapter.Hash(), s.optimizer.Hash(), s.adapter.theta};
    }
    void ExpectUnchanged(const Seen& before) const
    {
        Seen now = Look();
        EXPECT_EQ(now.version, before.version);
        EXPECT_EQ(now.hash, before.hash);
        EXPECT_EQ(now.opt_hash, before.opt_hash);
        EXPECT_EQ(std::memcmp(now.theta.data(), before.theta.data(), now.theta.size() * 4), 0);
    }
    void ExpectInSync() const
    {
        EXPECT_EQ(replica->version(), publisher->version());
        EXPECT_EQ(replica->state().adapter.Hash(), publisher->replica_view().adapter.Hash());
        EXPECT_EQ(replica->state().optimizer.Hash(), publisher->replica_view().optimizer.Hash());
    }

    std::unique_ptr<Replica> replica;
    testing::SplitMix rng{99};
};

TEST_F(ReplicaErrors, TruncatedFrameAtEveryLength)
{
    PublishedUpdate u = Publish();
    Seen before = Look();
    for (size_t len = 0; len < u.frame.size(); ++len)
    {
        Status s = replica->Apply(std::string_view(u.frame).substr(0, len));
        ASSERT_EQ(s.code(), StatusCode::kCorruption) << len << " " << s.ToString();
    }
    ExpectUnchanged(before);
    ASSERT_TRUE(replica->Apply(u.frame).ok());
    ExpectInSync();
}

TEST_F(ReplicaErrors, FlippedByteAnywhere)
{
    PublishedUpdate u = Publish();
    Seen before = Look();
    for (size_t i = 0; i < u.frame.size(); ++i)
    {
        std::string bad = u.frame;
        bad[i] = static_cast<char>(bad[i] ^ 0x10);
        Status s = replica->Apply(bad);
        ASSERT_EQ(s.code(), StatusCode::kCorruption) << "byte " << i << ": " << s.ToString();
    }
    ExpectUnchanged(before);
    EXPECT_TRUE(replica->Apply(u.frame).ok());
}

TEST_F(ReplicaErrors, AbsurdLengthInHeaderAllocatesNothing)
{
    PublishedUpdate u = Publish();
    Seen before = Look();
    std::string bad = u.frame;
    const uint64_t huge = uint64_t{1} << 62;
    std::memcpy(&bad[8], &huge, 8);
    Status s = replica->Apply(bad);
    EXPECT_EQ(s.code(), StatusCode::kCorruption);
    EXPECT_NE(s.message().find("limit"), std::string::npos) << s.message();
    // A length just under the limit but beyond the buffer is a truncation, not an allocation.
    const uint64_t big = kMaxFrameBody;
    std::memcpy(&bad[8], &big, 8);
    s = replica->Apply(bad);
    EXPECT_EQ(s.code(), StatusCode::kCorruption);
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
    ExpectUnchanged(before);
}

TEST_F(ReplicaErrors, DuplicateIsStale)
{
    PublishedUpdate u1 = Publish();
    ASSERT_TRUE(replica->Apply(u1.frame).ok());
    Seen before = Look();
    EXPECT_EQ(replica->Apply(u1.frame).code(), StatusCode::kStale);
    ExpectUnchanged(before);
}

TEST_F(ReplicaErrors, GapThenCatchUpFromRing)
{
    PublishedUpdate u1 = Publish();
    PublishedUpdate u2 = Publish();
    Seen before = Look();
    Status s = replica->Apply(u2.frame);
    EXPECT_EQ(s.code(), StatusCode::kGap) << s.ToString();
    ExpectUnchanged(before);
    CatchUpPlan plan = publisher->CatchUpFrom(replica->version()).value();
    EXPECT_TRUE(plan.snapshot_frame.empty());
    ASSERT_EQ(plan.update_frames.size(), 2u);
    ASSERT_TRUE(replica->CatchUp(plan.snapshot_frame, plan.update_frames).ok());
    ExpectInSync();
    (void) u1;
}

TEST_F(ReplicaErrors, LateJoinerCatchesUpFromSnapshotPlusRing)
{
    for (int i = 0; i < 13; ++i)
    {
        Publish(); // ring holds 6..13, snapshots at 4, 8, 12
    }
    EXPECT_EQ(publisher->latest_snapshot_version(), 12u);
    CatchUpPlan plan = publisher->CatchUpFrom(0).value();
    EXPECT_FALSE(plan.snapshot_frame.empty());
    EXPECT_EQ(plan.update_frames.size(), 1u);
    ASSERT_TRUE(replica->CatchUp(plan.snapshot_frame, plan.update_frames).ok());
    ExpectInSync();
    EXPECT_EQ(replica->stats().restores, 1u);
    // From inside the ring no snapshot is needed.
    EXPECT_TRUE(publisher->CatchUpFrom(7)->snapshot_frame.empty());
    EXPECT_EQ(publisher->CatchUpFrom(7)->update_frames.size(), 6u);
    EXPECT_FALSE(publisher->CatchUpFrom(99).ok());
    // The caught-up replica keeps applying normally.
    ASSERT_TRUE(replica->Apply(Publish().frame).ok());
    ExpectInSync();
}

TEST_F(ReplicaErrors, ConfigMismatch)
{
    OptimizerConfig other = opt;
    other.lr.base_lr = 5e-4f;
    auto stranger = Replica::Create(spec, layout, other, init).value();
    PublishedUpdate u = Publish();
    const ReplicatedState before = stranger->state();
    Status s = stranger->Apply(u.frame);
    EXPECT_EQ(s.code(), StatusCode::kConfigMismatch) << s.ToString();
    EXPECT_EQ(stranger->version(), 0u);
    EXPECT_EQ(stranger->state().adapter.Hash(), before.adapter.Hash());
    // A snapshot from another configuration is refused too.
    EXPECT_EQ(stranger->Restore(publisher->LatestSnapshotFrame().value()).code(),
              StatusCode::kConfigMismatch);

    SyncSpec bf16 = spec;
    bf16.compressor_options = {{"dtype", "bf16"}};
    auto other_codec = Replica::Create(bf16, layout, opt, init).value();
    EXPECT_EQ(other_codec->Apply(u.frame).code(), StatusCode::kConfigMismatch);
}

TEST_F(ReplicaErrors, HashMismatchDoesNotCommit)
{
    PublishedUpdate u = Publish();
    wire::Update parsed = DecodeUpdateFrame(u.frame).value();
    parsed.set_state_hash(parsed.state_hash() ^ 1);
    Seen before = Look();
    Status s = replica->Apply(EncodeUpdateFrame(parsed).value());
    EXPECT_EQ(s.code(), StatusCode::kHashMismatch) << s.ToString();
    ExpectUnchanged(before);
    EXPECT_EQ(replica->stats().hash_mismatches, 1u);
    EXPECT_TRUE(replica->Apply(u.frame).ok());
    ExpectInSync();
}

TEST_F(ReplicaErrors, WrongBaseVersionAndBadPayload)
{
    PublishedUpdate u = Publish();
    wire::Update parsed = DecodeUpdateFrame(u.frame).value();
    Seen before = Look();

    wire::Update inconsistent = parsed;
    inconsistent.set_version(5); // base 0 -> 5: not a single step
    EXPECT_EQ(replica->Apply(EncodeUpdateFrame(inconsistent).value()).code(),
              StatusCode::kCorruption);

    wire::Update ahead = parsed;
    ahead.set_base_version(3);
    ahead.set_version(4);
    EXPECT_EQ(replica->Apply(EncodeUpdateFrame(ahead).value()).code(), StatusCode::kGap);

    wire::Update short_payload = parsed;
    short_payload.mutable_payload()->resize(parsed.payload().size() - 4);
    EXPECT_EQ(replica->Apply(EncodeUpdateFrame(short_payload).value()).code(),
              StatusCode::kCorruption);

    wire::Update future = parsed;
    future.set_format_version(2);
    EXPECT_EQ(replica->Apply(EncodeUpdateFrame(future).value()).code(), StatusCode::kNotSupported);

    // A body that is not a protobuf at all, with a valid frame around it.
    EXPECT_EQ(replica->Apply(EncodeFrame(FrameKind::kUpdate, "\xff\xff\xff\xff").value()).code(),
              StatusCode::kCorruption);
    // A snapshot frame where an update is expected.
    EXPECT_EQ(replica->Apply(publisher->LatestSnapshotFrame().value()).code(),
              StatusCode::kCorruption);
    ExpectUnchanged(before);
}

TEST_F(ReplicaErrors, CorruptSnapshotsAreRefused)
{
    Publish();
    Seen before = Look();
    const std::string frame = publisher->LatestSnapshotFrame().value();
    EXPECT_EQ(replica->Restore(frame.substr(0, frame.size() - 1)).code(), StatusCode::kCorruption);
    // Re-frame a snapshot whose theta has the wrong size.
    wire::Snapshot s;
    ASSERT_TRUE(s.ParseFromString(std::string(DecodeFrame(frame)->body)));
    s.mutable_theta()->resize(8);
    EXPECT_EQ(
        replica->Restore(EncodeFrame(FrameKind::kSnapshot, s.SerializeAsString()).value()).code(),
        StatusCode::kCorruption);
    ExpectUnchanged(before);
}

TEST(PublisherOptions, RejectsRingShorterThanSnapshotInterval)
{
    SyncSpec spec;
    auto layout = testing::SmallLayout();
    auto p = Publisher::Create(spec, layout, OptimizerConfig(), testing::InitialState(layout, 1),
                               PublisherOptions{/*ring_capacity=*/4, /*snapshot_interval=*/8});
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
}

TEST(SyncSpecErrors, BudgetBelowPayloadAndUnknownCompressor)
{
    auto layout = testing::SmallLayout();
    SyncSpec spec;
    spec.budget = Budget::Bytes(10);
    auto p = Publisher::Create(spec, layout, OptimizerConfig(), testing::InitialState(layout, 1));
    EXPECT_EQ(p.status().code(), StatusCode::kBudgetTooSmall);
    spec = SyncSpec();
    spec.compressor = "zip";
    p = Publisher::Create(spec, layout, OptimizerConfig(), testing::InitialState(layout, 1));
    EXPECT_EQ(p.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(p.status().message().find("dense"), std::string::npos);
}

} // namespace
} // namespace hilo
