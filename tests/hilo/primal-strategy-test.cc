// The primal strategy (primal error feedback): the learner's gradient point is, bit for bit, the
// adapter a separately built replica reaches from the published frames, over 1,000 steps on a
// layout above every parallel grain, with the learner and the replicas on one and on two threads;
// the master follows exactly the optimizer trajectory of its gradients whatever the compressor
// (beta = 1); the gap between master and shared adapter is the unsent error (beta = 1) or its
// decayed carry; a failed encode leaves everything untouched; late replicas catch up from
// snapshots without moments. The same lockstep covers the other new combinations (hilo + sparq,
// delta + pulse).
#include "hilo/core/parallel.h"
#include "hilo/optim/replay.h"
#include "hilo/sync/drift.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/compress-test-util.h"
#include "tests/hilo/test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

namespace hilo
{
namespace
{

SyncSpec
Spec(SyncKind kind, const std::string& compressor, const std::string& options, double fraction,
     bool ef = true, float decay = 1.0f)
{
    SyncSpec spec;
    spec.kind = kind;
    spec.compressor = compressor;
    spec.compressor_options = *ParseCompressorOptions(options);
    spec.budget = fraction > 0 ? Budget::Fraction(fraction) : Budget::Unlimited();
    spec.error_feedback = ErrorFeedbackOptions{ef, decay};
    return spec;
}

OptimizerConfig
Cosine()
{
    OptimizerConfig c;
    c.lr.kind = LrScheduleKind::kCosine;
    c.lr.base_lr = 2e-3f;
    c.lr.warmup_steps = 50;
    c.lr.total_steps = 1000;
    c.lr.min_lr_ratio = 0.1f;
    c.weight_decay = 0.01f;
    return c;
}

struct LockstepCase
{
    const char* name;
    SyncSpec spec;
    int steps{1000};
};

/// A layout above every parallel grain of the replay, the decoders and the vector sums (the
/// largest is 64 Ki values), so that two threads really split each loop: 102,400 parameters.
AdapterLayout
AboveGrainsLayout()
{
    return testing::LoraLayout(/*layers=*/1, /*r=*/16, /*d=*/1024, /*f=*/2048);
}

struct LockstepResult
{
    uint64_t final_hash{0};
    int learner_threads_seen{0}; // distinct threads that ran the learner's parallel chunks
    int replica_threads_seen{0}; // the same for the replicas' applies
};

// Runs `steps` steps of the learner on `learner_threads` threads. A replica built on its own
// (Replica::Create from the spec, never a view of the learner) applies each frame as it is
// published, and for hilo and primal the learner's gradient point must be that replica's adapter,
// bit for bit, at every version. A second replica then applies every frame on `replica_threads`
// threads and must reach the learner's hash at every version and its bytes at the end.
LockstepResult
Lockstep(const SyncSpec& spec, const AdapterLayout& layout, int steps, int learner_threads,
         int replica_threads)
{
    LockstepResult result;
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 17);
    auto pub = Publisher::Create(spec, layout, opt, init).value();
    auto follower = Replica::Create(spec, layout, opt, init).value();
    testing::SplitMix rng(99);
    std::vector<std::vector<float>> pool(5);
    for (std::vector<float>& g : pool)
        testing::FillGradient(layout, &rng, &g);
    const bool point_is_replica = spec.kind == SyncKind::kHilo || spec.kind == SyncKind::kPrimal;
    std::vector<std::string> frames;
    std::vector<uint64_t> hashes;
    at::set_num_threads(learner_threads);
    {
        ParallelTally learner_tally;
        for (int step = 1; step <= steps; ++step)
        {
            StatusOr<PublishedUpdate> u = pub->Step(pool[step % pool.size()]);
            if (!u.ok())
            {
                ADD_FAILURE() << "step " << step << ": " << u.status().ToString();
                return result;
            }
            {
                ParallelTally not_the_learner; // the follower's chunks are not the learner's
                const Status s = follower->Apply(u->frame);
                if (!s.ok())
                {
                    ADD_FAILURE() << "follower refused version " << step << ": " << s.ToString();
                    return result;
                }
            }
            if (point_is_replica && !testing::BitIdentical(pub->gradient_point().theta,
                                                           follower->state().adapter.theta))
            {
                ADD_FAILURE() << "gradient point is not the replica's adapter at step " << step;
                return result;
            }
            hashes.push_back(pub->replica_view().adapter.Hash());
            frames.push_back(std::move(u->frame));
        }
        result.learner_threads_seen = learner_tally.threads();
    }
    at::set_num_threads(replica_threads);
    auto rep = Replica::Create(spec, layout, opt, init).value();
    {
        ParallelTally replica_tally;
        for (size_t v = 0; v < frames.size(); ++v)
        {
            Status s = rep->Apply(frames[v]); // checks the frame's state hash itself
            if (!s.ok() || rep->state().adapter.Hash() != hashes[v])
            {
                ADD_FAILURE() << "replica differs at version " << v + 1 << ": " << s.ToString();
                at::set_num_threads(1);
                return result;
            }
        }
        result.replica_threads_seen = replica_tally.threads();
    }
    EXPECT_TRUE(
        testing::BitIdentical(rep->state().adapter.theta, pub->replica_view().adapter.theta));
    EXPECT_TRUE(testing::BitIdentical(rep->state().adapter.theta, follower->state().adapter.theta));
    at::set_num_threads(1);
    EXPECT_NE(pub->replica_view().adapter.Hash(), init.Hash());
    result.final_hash = pub->replica_view().adapter.Hash();
    return result;
}

void
PrintTo(const LockstepCase& c, std::ostream* os)
{
    *os << c.name;
}

class NewSchemesLockstep : public ::testing::TestWithParam<LockstepCase>
{
  protected:
    void TearDown() override { at::set_num_threads(1); }
};

// 1,000 steps above the grains (300 for the variants of the combinations already run for 1,000):
// the learner on one thread with replicas on two, then the learner on two threads with replicas
// on one. Both runs must end on the same bytes (the thread count
// changes nothing), and the two-thread side must really have run on two threads.
TEST_P(NewSchemesLockstep, ThousandStepsBitIdenticalOnOneAndTwoThreads)
{
    const AdapterLayout layout = AboveGrainsLayout();
    const LockstepResult a = Lockstep(GetParam().spec, layout, GetParam().steps, 1, 2);
    const LockstepResult b = Lockstep(GetParam().spec, layout, GetParam().steps, 2, 1);
    ASSERT_NE(a.final_hash, 0u);
    EXPECT_EQ(a.final_hash, b.final_hash);
    EXPECT_EQ(a.learner_threads_seen, 1);
    EXPECT_EQ(a.replica_threads_seen, 2);
    EXPECT_EQ(b.learner_threads_seen, 2);
    EXPECT_EQ(b.replica_threads_seen, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, NewSchemesLockstep,
    ::testing::Values(
        LockstepCase{"primal_sparq", Spec(SyncKind::kPrimal, "sparq", "bits=4", 0.05)},
        LockstepCase{"primal_sparq_decay",
                     Spec(SyncKind::kPrimal, "sparq", "bits=3", 0.05, true, 0.7f), 300},
        LockstepCase{"primal_spar", Spec(SyncKind::kPrimal, "spar", "dtype=bf16", 0.05), 300},
        LockstepCase{"primal_topk", Spec(SyncKind::kPrimal, "topk", "dtype=bf16", 0.05), 300},
        LockstepCase{"primal_pulse", Spec(SyncKind::kPrimal, "pulse", "", 0)},
        LockstepCase{"hilo_sparq", Spec(SyncKind::kHilo, "sparq", "bits=4", 0.05)},
        LockstepCase{"delta_pulse", Spec(SyncKind::kDelta, "pulse", "", 0)}),
    [](const ::testing::TestParamInfo<LockstepCase>& info) { return info.param.name; });

TEST(PrimalStrategy, MasterFollowsTheOptimizerExactlyWhateverTheCompressor)
{
    // beta = 1: x_{t+1} = x_t + u_t, so for the same gradients the master's trajectory is the
    // optimizer's own, bit for bit, however little the payload carries.
    const AdapterLayout layout = testing::LoraLayout();
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 3);
    auto pub =
        Publisher::Create(Spec(SyncKind::kPrimal, "sparq", "bits=2", 0.01), layout, opt, init)
            .value();
    auto replica =
        Replica::Create(Spec(SyncKind::kPrimal, "sparq", "bits=2", 0.01), layout, opt, init)
            .value();
    ReplicatedState reference{init, NewOptimizerState(opt, layout.numel())};
    ASSERT_NE(pub->master_state(), nullptr);
    for (int t = 0; t < 30; ++t)
    {
        const std::vector<float> g = testing::SpectralGradient(layout, 40 + t, 1e-3);
        PublishedUpdate u = pub->Step(g).value();
        // What the learner trains at is what a separately built replica reaches from the frames.
        ASSERT_TRUE(replica->Apply(u.frame).ok());
        ASSERT_TRUE(
            testing::BitIdentical(pub->gradient_point().theta, replica->state().adapter.theta))
            << "step " << t;
        ASSERT_TRUE(ReplayStep(opt, reference, g, &reference).ok());
        ASSERT_TRUE(
            testing::BitIdentical(pub->master_state()->adapter.theta, reference.adapter.theta))
            << "step " << t;
        ASSERT_EQ(pub->master_state()->optimizer.Hash(), reference.optimizer.Hash());
    }
    // 1% of the bytes cannot carry every step: the shared adapter lags the master.
    const DriftStats gap =
        ComputeDrift(pub->master_state()->adapter.theta, pub->replica_view().adapter.theta);
    EXPECT_GT(gap.max_abs, 0.0);
    EXPECT_TRUE(pub->train_state().optimizer.m.empty()); // replicas and w keep no moments
}

TEST(PrimalStrategy, GapIsTheUnsentErrorOrItsDecayedCarry)
{
    const AdapterLayout layout = testing::LoraLayout();
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 4);
    for (float beta : {1.0f, 0.5f})
    {
        auto pub =
            Publisher::Create(Spec(SyncKind::kPrimal, "topk", "dtype=fp32", 0.05, true, beta),
                              layout, opt, init)
                .value();
        auto rep = Replica::Create(Spec(SyncKind::kPrimal, "topk", "dtype=fp32", 0.05, true, beta),
                                   layout, opt, init)
                       .value();
        for (int t = 0; t < 12; ++t)
        {
            const std::vector<float> w = pub->replica_view().adapter.theta;
            const std::vector<float> x = pub->master_state()->adapter.theta;
            ReplicatedState stepped{pub->master_state()->adapter, pub->master_state()->optimizer};
            const std::vector<float> g = testing::SpectralGradient(layout, 80 + t, 1e-3);
            ASSERT_TRUE(ReplayStep(opt, stepped, g, &stepped).ok());
            PublishedUpdate u = pub->Step(g).value();
            ASSERT_TRUE(rep->Apply(u.frame).ok());
            const std::vector<float>& w2 = pub->replica_view().adapter.theta;
            const std::vector<float>& x2 = pub->master_state()->adapter.theta;
            // X = u + beta (x - w); the master is w + X, the replicas w + C(X), so the new gap
            // x2 - w2 is X - C(X): top-k ships some entries of X exactly and leaves the rest.
            int sent = 0;
            for (size_t i = 0; i < w.size(); ++i)
            {
                const float X = beta == 1.0f
                                    ? stepped.adapter.theta[i] - w[i]
                                    : (stepped.adapter.theta[i] - x[i]) + beta * (x[i] - w[i]);
                ASSERT_EQ(x2[i], beta == 1.0f ? stepped.adapter.theta[i] : w[i] + X) << i;
                if (w2[i] != w[i])
                {
                    ++sent;
                    ASSERT_EQ(w2[i], w[i] + X) << "a shipped entry lands on the master, " << i;
                }
            }
            EXPECT_GT(sent, 0);
            EXPECT_LT(sent, static_cast<int>(w.size()));
        }
    }
}

TEST(PrimalStrategy, WithoutFeedbackEachStepStandsAlone)
{
    // ef off: X = u_t and the master restarts from w every step, so master - w is the unsent
    // part of this step only.
    const AdapterLayout layout = testing::LoraLayout();
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 5);
    auto with =
        Publisher::Create(Spec(SyncKind::kPrimal, "spar", "", 0.02), layout, opt, init).value();
    auto without =
        Publisher::Create(Spec(SyncKind::kPrimal, "spar", "", 0.02, false), layout, opt, init)
            .value();
    for (int t = 0; t < 10; ++t)
    {
        const std::vector<float> g = testing::SpectralGradient(layout, 90 + t, 1e-3);
        ASSERT_TRUE(with->Step(g).ok());
        ASSERT_TRUE(without->Step(g).ok());
    }
    const double gap_with =
        ComputeDrift(with->master_state()->adapter.theta, with->replica_view().adapter.theta)
            .rel_l2;
    const double gap_without =
        ComputeDrift(without->master_state()->adapter.theta, without->replica_view().adapter.theta)
            .rel_l2;
    EXPECT_GT(gap_with, gap_without); // feedback carries the unsent error forward
    EXPECT_GT(gap_without, 0.0);
}

TEST(PrimalStrategy, FailedEncodeLeavesEverythingUntouched)
{
    const AdapterLayout layout = testing::LoraLayout();
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 6);
    auto pub =
        Publisher::Create(Spec(SyncKind::kPrimal, "sparq", "", 0.05), layout, opt, init).value();
    ASSERT_TRUE(pub->Step(testing::SpectralGradient(layout, 1)).ok());
    const uint64_t w = pub->replica_view().adapter.Hash();
    const uint64_t x = pub->master_state()->adapter.Hash();
    const uint64_t moments = pub->master_state()->optimizer.Hash();
    std::vector<float> bad = testing::SpectralGradient(layout, 2);
    bad[5] = std::nanf("");
    ASSERT_FALSE(pub->Step(bad).ok());
    EXPECT_EQ(pub->version(), 1u);
    EXPECT_EQ(pub->replica_view().adapter.Hash(), w);
    EXPECT_EQ(pub->master_state()->adapter.Hash(), x);
    EXPECT_EQ(pub->master_state()->optimizer.Hash(), moments);
    ASSERT_TRUE(pub->Step(testing::SpectralGradient(layout, 3)).ok());
}

TEST(PrimalStrategy, LateReplicaCatchesUpFromASnapshotWithoutMoments)
{
    const AdapterLayout layout = testing::LoraLayout();
    const OptimizerConfig opt = Cosine();
    const AdapterState init = testing::InitialState(layout, 8);
    const SyncSpec spec = Spec(SyncKind::kPrimal, "spar", "", 0.05);
    auto pub = Publisher::Create(spec, layout, opt, init, PublisherOptions{8, 4}).value();
    for (int t = 0; t < 19; ++t)
        ASSERT_TRUE(pub->Step(testing::SpectralGradient(layout, 200 + t, 1e-3)).ok());
    auto late = Replica::Create(spec, layout, opt, init).value();
    CatchUpPlan plan = pub->CatchUpFrom(0).value();
    ASSERT_FALSE(plan.snapshot_frame.empty());
    ASSERT_TRUE(late->CatchUp(plan.snapshot_frame, plan.update_frames).ok());
    EXPECT_EQ(late->version(), 19u);
    EXPECT_TRUE(
        testing::BitIdentical(late->state().adapter.theta, pub->replica_view().adapter.theta));
    EXPECT_TRUE(late->state().optimizer.m.empty());
}

TEST(PrimalStrategy, IsNamedAndParsed)
{
    EXPECT_STREQ(SyncKindName(SyncKind::kPrimal), "primal");
    EXPECT_EQ(ParseSyncKind("primal").value(), SyncKind::kPrimal);
    StatusOr<SyncKind> bad = ParseSyncKind("ef21p");
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("primal"), std::string::npos);
}

} // namespace
} // namespace hilo
