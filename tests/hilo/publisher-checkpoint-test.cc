// Publisher checkpoints: a publisher restored from a checkpoint continues bit-identically (the
// same frames, hashes and catch-up plans as the one that kept running) for every strategy and for
// the compressors that keep learner-local state; damaged checkpoints are refused with typed
// errors; catch-up plans can be forced to start from a snapshot.
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

namespace hilo
{
namespace
{

struct Case
{
    SyncKind kind;
    std::string compressor;
    CompressorOptions options;
    bool error_feedback;
};

void
PrintTo(const Case& c, std::ostream* os)
{
    *os << SyncKindName(c.kind) << "/" << c.compressor;
}

std::string
CaseName(const ::testing::TestParamInfo<Case>& info)
{
    return std::string(SyncKindName(info.param.kind)) + "_" + info.param.compressor;
}

class PublisherCheckpoint : public ::testing::TestWithParam<Case>
{
  protected:
    void SetUp() override
    {
        layout = testing::SmallLayout();
        spec.kind = GetParam().kind;
        spec.compressor = GetParam().compressor;
        spec.compressor_options = GetParam().options;
        spec.error_feedback.enabled = GetParam().error_feedback;
        if (spec.compressor != "dense" && spec.compressor != "pulse")
        {
            spec.budget = Budget::Fraction(0.6);
        }
        init = testing::InitialState(layout, 3);
    }

    std::unique_ptr<Publisher> NewPublisher() const
    {
        auto p = Publisher::Create(spec, layout, opt, init, options);
        EXPECT_TRUE(p.ok()) << p.status().ToString();
        return std::move(p).value();
    }

    AdapterLayout layout;
    OptimizerConfig opt;
    SyncSpec spec;
    AdapterState init;
    PublisherOptions options{/*ring_capacity=*/6, /*snapshot_interval=*/3};
};

TEST_P(PublisherCheckpoint, RestoredPublisherContinuesBitIdentically)
{
    auto original = NewPublisher();
    testing::SplitMix rng(41);
    std::vector<float> grad;
    for (int step = 0; step < 7; ++step)
    {
        testing::FillGradient(layout, &rng, &grad);
        ASSERT_TRUE(original->Step(grad).ok());
    }
    const std::string checkpoint = original->Checkpoint();
    auto restored = Publisher::Restore(spec, layout, opt, checkpoint, options);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    Publisher& copy = **restored;
    EXPECT_EQ(copy.version(), original->version());
    EXPECT_EQ(copy.latest_snapshot_version(), original->latest_snapshot_version());
    EXPECT_EQ(copy.Checkpoint(), checkpoint) << "a restored checkpoint saves the same bytes";

    // Every later step: the same frame, byte for byte, and the same learner state.
    for (int step = 0; step < 6; ++step)
    {
        testing::FillGradient(layout, &rng, &grad);
        auto a = original->Step(grad);
        auto b = copy.Step(grad);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(a->frame, b->frame) << "step " << step;
        EXPECT_EQ(a->state_hash, b->state_hash);
        EXPECT_EQ(original->train_state().adapter.Hash(), copy.train_state().adapter.Hash());
        EXPECT_EQ(original->train_state().optimizer.Hash(), copy.train_state().optimizer.Hash());
        if (original->master_state() != nullptr)
        {
            ASSERT_NE(copy.master_state(), nullptr);
            EXPECT_EQ(original->master_state()->adapter.Hash(),
                      copy.master_state()->adapter.Hash());
            EXPECT_EQ(original->master_state()->optimizer.Hash(),
                      copy.master_state()->optimizer.Hash());
        }
    }
    // The ring and snapshot came along: catch-up plans agree, from any version.
    for (uint64_t from = 0; from <= original->version(); ++from)
    {
        for (bool snapshot : {false, true})
        {
            auto a = original->CatchUpFrom(from, snapshot);
            auto b = copy.CatchUpFrom(from, snapshot);
            ASSERT_EQ(a.ok(), b.ok()) << from;
            if (a.ok())
            {
                EXPECT_EQ(a->snapshot_frame, b->snapshot_frame) << from;
                EXPECT_EQ(a->update_frames, b->update_frames) << from;
            }
        }
    }
}

TEST_P(PublisherCheckpoint, DamagedCheckpointsAreRefused)
{
    auto original = NewPublisher();
    testing::SplitMix rng(5);
    std::vector<float> grad;
    for (int step = 0; step < 4; ++step)
    {
        testing::FillGradient(layout, &rng, &grad);
        ASSERT_TRUE(original->Step(grad).ok());
    }
    const std::string checkpoint = original->Checkpoint();
    for (size_t len : {size_t{0}, size_t{11}, checkpoint.size() / 2, checkpoint.size() - 1})
    {
        auto r = Publisher::Restore(spec, layout, opt, checkpoint.substr(0, len), options);
        EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << len;
    }
    std::string flipped = checkpoint;
    flipped[flipped.size() / 3] ^= 0x10;
    EXPECT_EQ(Publisher::Restore(spec, layout, opt, flipped, options).status().code(),
              StatusCode::kCorruption);
    PublisherOptions other = options;
    other.ring_capacity += 1;
    EXPECT_EQ(Publisher::Restore(spec, layout, opt, checkpoint, other).status().code(),
              StatusCode::kInvalidArgument);
    OptimizerConfig other_opt = opt;
    other_opt.lr.base_lr *= 2;
    EXPECT_EQ(Publisher::Restore(spec, layout, other_opt, checkpoint, options).status().code(),
              StatusCode::kConfigMismatch);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, PublisherCheckpoint,
    ::testing::Values(
        Case{SyncKind::kFull, "dense", {{"dtype", "bf16"}}, false},
        Case{SyncKind::kHilo, "dense", {}, false}, Case{SyncKind::kHilo, "spar", {}, true},
        Case{SyncKind::kHilo, "powersgd", {{"max_rank", "2"}}, true},
        Case{SyncKind::kHilo, "randk", {}, true}, Case{SyncKind::kHilo, "quant", {}, true},
        Case{SyncKind::kDelta, "topk", {}, true}, Case{SyncKind::kPrimal, "spar", {}, true},
        Case{SyncKind::kPrimal, "sparq", {}, false}, Case{SyncKind::kDelta, "pulse", {}, false}),
    CaseName);

TEST(PublisherCatchUp, WithSnapshotAlwaysStartsFromTheLatestSnapshot)
{
    const AdapterLayout layout = testing::SmallLayout();
    SyncSpec spec;
    spec.kind = SyncKind::kHilo;
    const OptimizerConfig opt;
    const AdapterState init = testing::InitialState(layout, 2);
    auto publisher = Publisher::Create(spec, layout, opt, init, {8, 4}).value();
    testing::SplitMix rng(3);
    std::vector<float> grad;
    for (int step = 0; step < 6; ++step)
    {
        testing::FillGradient(layout, &rng, &grad);
        ASSERT_TRUE(publisher->Step(grad).ok());
    }
    ASSERT_EQ(publisher->latest_snapshot_version(), 4u);
    auto ring_only = publisher->CatchUpFrom(5).value();
    EXPECT_TRUE(ring_only.snapshot_frame.empty());
    EXPECT_EQ(ring_only.update_frames.size(), 1u);
    // A replica whose state cannot be trusted, even one already at the last version, is sent the
    // snapshot and the ring after it; it ends in sync.
    for (uint64_t from : {uint64_t{0}, uint64_t{5}, uint64_t{6}})
    {
        auto plan = publisher->CatchUpFrom(from, /*with_snapshot=*/true).value();
        EXPECT_FALSE(plan.snapshot_frame.empty()) << from;
        EXPECT_EQ(plan.update_frames.size(), 2u) << from;
        auto replica = Replica::Create(spec, layout, opt, init).value();
        ASSERT_TRUE(replica->CatchUp(plan.snapshot_frame, plan.update_frames).ok());
        EXPECT_EQ(replica->version(), 6u);
        EXPECT_EQ(replica->state().adapter.Hash(), publisher->replica_view().adapter.Hash());
    }
}

TEST(ReplicaDivergence, DivergedReplayFailsItsHashCheckAndChangesNothing)
{
    const AdapterLayout layout = testing::SmallLayout();
    SyncSpec spec;
    spec.kind = SyncKind::kHilo;
    const OptimizerConfig opt;
    const AdapterState init = testing::InitialState(layout, 2);
    auto publisher = Publisher::Create(spec, layout, opt, init, {8, 4}).value();
    auto replica = Replica::Create(spec, layout, opt, init).value();
    testing::SplitMix rng(8);
    std::vector<float> grad;
    testing::FillGradient(layout, &rng, &grad);
    const std::string frame = publisher->Step(grad).value().frame;
    const uint64_t before = replica->state().adapter.Hash();
    replica->DivergeNextReplay();
    EXPECT_EQ(replica->Apply(frame).code(), StatusCode::kHashMismatch);
    EXPECT_EQ(replica->version(), 0u);
    EXPECT_EQ(replica->state().adapter.Hash(), before);
    // One replay only: the same frame then applies.
    ASSERT_TRUE(replica->Apply(frame).ok());
    EXPECT_EQ(replica->state().adapter.Hash(), publisher->replica_view().adapter.Hash());
}

} // namespace
} // namespace hilo
