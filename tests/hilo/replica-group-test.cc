// Replicas of a group share the states that are bit-identical by construction, and only those:
// each holds what an unshared replica applying the same frames holds, a replica told to diverge
// still diverges, a different frame of the same version is replayed, not looked up, a restored
// replica holds its own state, and records die with the states they start from.
#include "hilo/sync/replica-group.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/dense-hilo-fixture.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <cstring>

namespace hilo
{
namespace
{

class ReplicaGroupTest : public testing::DenseHiloFixture
{
  protected:
    void SetUp() override
    {
        DenseHiloFixture::SetUp();
        group = ReplicaGroup::Create(spec, layout, opt, init).value();
    }

    using DenseHiloFixture::Publish;
    PublishedUpdate Publish(Publisher* p, uint64_t seed)
    {
        testing::SplitMix rng(seed);
        return Publish(p, &rng);
    }

    static bool SameBytes(const ReplicatedState& a, const ReplicatedState& b)
    {
        return a.adapter.version == b.adapter.version &&
               a.adapter.theta.size() == b.adapter.theta.size() &&
               std::memcmp(a.adapter.theta.data(), b.adapter.theta.data(),
                           a.adapter.theta.size() * sizeof(float)) == 0 &&
               a.optimizer.Hash() == b.optimizer.Hash();
    }

    std::shared_ptr<ReplicaGroup> group;
};

TEST_F(ReplicaGroupTest, MembersHoldWhatAnUnsharedReplicaHoldsInOneObject)
{
    auto alone = Replica::Create(spec, layout, opt, init).value();
    auto a = Replica::Create(group);
    auto b = Replica::Create(group);
    EXPECT_EQ(&a->state(), &b->state());
    for (uint64_t v = 1; v <= 6; ++v)
    {
        PublishedUpdate u = Publish(publisher.get(), v);
        ASSERT_TRUE(alone->Apply(u.frame).ok());
        ASSERT_TRUE(a->Apply(u.frame).ok());
        ASSERT_TRUE(b->Apply(u.frame).ok());
        EXPECT_TRUE(SameBytes(a->state(), alone->state())) << v;
        EXPECT_EQ(&a->state(), &b->state()) << v;
        EXPECT_EQ(b->state().adapter.Hash(), u.state_hash);
    }
    EXPECT_EQ(a->stats().applied, 6u);
    EXPECT_EQ(b->stats().applied, 6u);
    // Only the record from the version before is left (the earlier bases are gone).
    EXPECT_EQ(group->records(), 1u);
}

TEST_F(ReplicaGroupTest, AReplicaToldToDivergeReplaysOnItsOwnAndFails)
{
    auto a = Replica::Create(group);
    auto b = Replica::Create(group);
    PublishedUpdate u1 = Publish(publisher.get(), 1);
    ASSERT_TRUE(a->Apply(u1.frame).ok());
    b->DivergeNextReplay();
    EXPECT_EQ(b->Apply(u1.frame).code(), StatusCode::kHashMismatch);
    EXPECT_EQ(b->version(), 0u);
    EXPECT_EQ(b->stats().hash_mismatches, 1u);
    EXPECT_EQ(a->version(), 1u);
    // The divergence is spent: the same frame now applies (from the group's record).
    ASSERT_TRUE(b->Apply(u1.frame).ok());
    EXPECT_EQ(&a->state(), &b->state());
}

TEST_F(ReplicaGroupTest, ADifferentFrameOfTheSameVersionIsReplayedNotLookedUp)
{
    // Another learner with the same configuration publishes version 1 from another gradient: a
    // frame of the same size, base and version whose bytes differ.
    std::unique_ptr<Publisher> other = NewPublisher();
    PublishedUpdate mine = Publish(publisher.get(), 1);
    PublishedUpdate theirs = Publish(other.get(), 2);
    ASSERT_EQ(mine.frame.size(), theirs.frame.size());
    ASSERT_NE(mine.state_hash, theirs.state_hash);
    auto a = Replica::Create(group);
    auto b = Replica::Create(group);
    auto alone = Replica::Create(spec, layout, opt, init).value();
    ASSERT_TRUE(a->Apply(mine.frame).ok());
    ASSERT_TRUE(b->Apply(theirs.frame).ok());
    ASSERT_TRUE(alone->Apply(theirs.frame).ok());
    EXPECT_EQ(b->state().adapter.Hash(), theirs.state_hash);
    EXPECT_TRUE(SameBytes(b->state(), alone->state()));
    EXPECT_NE(&a->state(), &b->state());
}

TEST_F(ReplicaGroupTest, ARestoredReplicaHoldsItsOwnStateAndStillFollows)
{
    auto a = Replica::Create(group);
    auto b = Replica::Create(group);
    for (uint64_t v = 1; v <= 4; ++v)
    {
        ASSERT_TRUE(a->Apply(Publish(publisher.get(), v).frame).ok());
    }
    ASSERT_TRUE(b->Restore(publisher->LatestSnapshotFrame().value()).ok());
    EXPECT_EQ(b->version(), 4u);
    EXPECT_NE(&a->state(), &b->state());
    EXPECT_TRUE(SameBytes(a->state(), b->state()));
    PublishedUpdate u5 = Publish(publisher.get(), 5);
    ASSERT_TRUE(a->Apply(u5.frame).ok());
    ASSERT_TRUE(b->Apply(u5.frame).ok());
    EXPECT_TRUE(SameBytes(a->state(), b->state()));
}

TEST_F(ReplicaGroupTest, RecordsDieWithTheirBase)
{
    auto a = Replica::Create(group);
    auto straggler = Replica::Create(group);
    std::vector<PublishedUpdate> updates;
    for (uint64_t v = 1; v <= 5; ++v)
    {
        updates.push_back(Publish(publisher.get(), v));
        ASSERT_TRUE(a->Apply(updates.back().frame).ok());
    }
    // The straggler still holds version 0: every record from there on is kept for it.
    EXPECT_EQ(group->records(), 5u);
    for (const PublishedUpdate& u : updates)
    {
        ASSERT_TRUE(straggler->Apply(u.frame).ok());
        EXPECT_EQ(&a->state() == &straggler->state(), u.version == 5u);
    }
    // The next record forgets the chain from version 0 that nobody holds any more.
    ASSERT_TRUE(a->Apply(Publish(publisher.get(), 6).frame).ok());
    EXPECT_EQ(group->records(), 1u);
}

TEST(ReplicaGroup, RefusesAnInitialStateOfTheWrongSize)
{
    AdapterLayout layout = testing::SmallLayout();
    AdapterState init = testing::InitialState(layout, 1);
    init.theta.pop_back();
    SyncSpec spec;
    spec.kind = SyncKind::kHilo;
    spec.compressor = "dense";
    EXPECT_EQ(ReplicaGroup::Create(spec, layout, OptimizerConfig(), init).status().code(),
              StatusCode::kInvalidArgument);
}

} // namespace
} // namespace hilo
