// Learner and replica hold bit-identical adapters after every one of 1,000 replayed steps, for
// dense fp32 and bf16 HiLo payloads and for the full strategy, with 1 and 2 intra-op threads. The
// layout (525k parameters) is above the loops' grain, and every 2-thread run checks that its
// loops really ran on more than one thread.
#include "hilo/core/parallel.h"
#include "hilo/optim/replay.h"
#include "hilo/sync/publisher.h"
#include "hilo/sync/replica.h"
#include "tests/hilo/test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstring>

namespace hilo
{
namespace
{

struct Case
{
    SyncKind kind;
    const char* dtype;
    int threads;
};

std::string
CaseName(const ::testing::TestParamInfo<Case>& info)
{
    return std::string(SyncKindName(info.param.kind)) + "_" + info.param.dtype + "_" +
           std::to_string(info.param.threads) + "threads";
}

OptimizerConfig
TestOptimizer()
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

// Runs `steps` steps; returns the learner's final replica-view hash. Checks identity every step.
uint64_t
RunLockstep(const Case& c, int steps)
{
    at::set_num_threads(c.threads);
    const AdapterLayout layout = testing::MixedLayout();
    const OptimizerConfig opt = TestOptimizer();
    SyncSpec spec;
    spec.kind = c.kind;
    spec.compressor = "dense";
    spec.compressor_options = {{"dtype", c.dtype}};
    const AdapterState init = testing::InitialState(layout, 7);

    auto publisher = Publisher::Create(spec, layout, opt, init).value();
    auto replica = Replica::Create(spec, layout, opt, init).value();
    // A pool of distinct gradients, cycled: cheaper than drawing 1,000 fresh ones, and the
    // trajectory still never repeats (the state moves on every step).
    testing::SplitMix rng(42);
    std::vector<std::vector<float>> pool(7);
    for (std::vector<float>& g : pool)
    {
        testing::FillGradient(layout, &rng, &g);
    }
    ParallelTally tally;
    for (int step = 1; step <= steps; ++step)
    {
        PublishedUpdate u = publisher->Step(pool[step % pool.size()]).value();
        Status s = replica->Apply(u.frame);
        if (!s.ok())
        {
            ADD_FAILURE() << "step " << step << ": " << s.ToString();
            return 0;
        }
        const ReplicatedState& want = publisher->replica_view();
        const ReplicatedState& got = replica->state();
        if (got.adapter.version != static_cast<uint64_t>(step) ||
            got.adapter.Hash() != want.adapter.Hash() ||
            std::memcmp(got.adapter.theta.data(), want.adapter.theta.data(),
                        want.adapter.theta.size() * sizeof(float)) != 0)
        {
            ADD_FAILURE() << "replica differs from learner at step " << step;
            return 0;
        }
        if (c.kind == SyncKind::kHilo &&
            (got.optimizer.Hash() != want.optimizer.Hash() ||
             std::memcmp(got.optimizer.v.data(), want.optimizer.v.data(),
                         want.optimizer.v.size() * sizeof(float)) != 0))
        {
            ADD_FAILURE() << "replica optimizer state differs at step " << step;
            return 0;
        }
    }
    // Not vacuous: with two threads the decode and replay loops split across two OS threads.
    EXPECT_EQ(tally.threads(), c.threads);
    // The run really trained: parameters moved away from the initial ones.
    EXPECT_NE(publisher->train_state().adapter.Hash(), init.Hash());
    EXPECT_EQ(replica->stats().applied, static_cast<uint64_t>(steps));
    return publisher->replica_view().adapter.Hash();
}

class ReplayIdentityTest : public ::testing::TestWithParam<Case>
{
  protected:
    void TearDown() override { at::set_num_threads(1); }
};

TEST_P(ReplayIdentityTest, ThousandStepsBitIdentical)
{
    RunLockstep(GetParam(), 1000);
}

INSTANTIATE_TEST_SUITE_P(
    AllStrategies, ReplayIdentityTest,
    ::testing::Values(Case{SyncKind::kHilo, "fp32", 1}, Case{SyncKind::kHilo, "fp32", 2},
                      Case{SyncKind::kHilo, "bf16", 1}, Case{SyncKind::kHilo, "bf16", 2},
                      Case{SyncKind::kFull, "fp32", 1}, Case{SyncKind::kFull, "fp32", 2},
                      Case{SyncKind::kFull, "bf16", 1}, Case{SyncKind::kFull, "bf16", 2}),
    CaseName);

TEST(ReplayThreads, ResultDoesNotDependOnThreadCount)
{
    for (const char* dtype : {"fp32", "bf16"})
    {
        const uint64_t one = RunLockstep({SyncKind::kHilo, dtype, 1}, 100);
        const uint64_t two = RunLockstep({SyncKind::kHilo, dtype, 2}, 100);
        EXPECT_EQ(one, two) << dtype;
        EXPECT_NE(one, 0u);
    }
    at::set_num_threads(1);
}

TEST(ReplayThreads, OneStepInAndOutOfPlaceIsIndependentOfThreadCount)
{
    // ReplayStep alone, on both of its loops (in place: learner; out of place: replica), with a
    // state whose moments are far from their initial values.
    const AdapterLayout layout = testing::MixedLayout();
    const OptimizerConfig opt = TestOptimizer();
    testing::SplitMix rng(5);
    ReplicatedState start;
    start.adapter = testing::InitialState(layout, 3);
    start.optimizer = NewOptimizerState(opt, layout.numel());
    std::vector<float> g;
    for (int t = 0; t < 3; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        ReplayStep(opt, start, g, &start);
    }
    testing::FillGradient(layout, &rng, &g);
    std::vector<ReplicatedState> results;
    for (int threads : {1, 2})
    {
        at::set_num_threads(threads);
        ParallelTally tally;
        ReplicatedState in_place = start;
        ReplayStep(opt, in_place, g, &in_place);
        ReplicatedState out_of_place;
        ReplayStep(opt, start, g, &out_of_place);
        EXPECT_EQ(tally.threads(), threads);
        EXPECT_EQ(in_place.adapter.Hash(), out_of_place.adapter.Hash());
        EXPECT_EQ(in_place.optimizer.Hash(), out_of_place.optimizer.Hash());
        results.push_back(std::move(in_place));
    }
    at::set_num_threads(1);
    const auto bits = [](const std::vector<float>& a, const std::vector<float>& b)
    { return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0; };
    EXPECT_TRUE(bits(results[0].adapter.theta, results[1].adapter.theta));
    EXPECT_TRUE(bits(results[0].optimizer.m, results[1].optimizer.m));
    EXPECT_TRUE(bits(results[0].optimizer.v, results[1].optimizer.v));
    EXPECT_FALSE(bits(results[0].adapter.theta, start.adapter.theta));
}

TEST(ReplayThreads, Bf16PayloadChangesTheTrajectory)
{
    // Guards against a dtype option that is silently ignored.
    EXPECT_NE(RunLockstep({SyncKind::kHilo, "fp32", 1}, 20),
              RunLockstep({SyncKind::kHilo, "bf16", 1}, 20));
}

} // namespace
} // namespace hilo
