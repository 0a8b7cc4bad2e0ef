// Optimizer replay: agrees with an independent double-precision reference of PyTorch's AdamW and
// SGD semantics, in-place equals out-of-place bit for bit, and schedules are pure functions.
#include "hilo/optim/replay.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace hilo
{
namespace
{

TEST(LrSchedule, ConstantWarmupCosine)
{
    LrSchedule s;
    s.base_lr = 1.0f;
    EXPECT_FLOAT_EQ(LearningRate(s, 1), 1.0f);
    EXPECT_FLOAT_EQ(LearningRate(s, 1000000), 1.0f);

    s.kind = LrScheduleKind::kLinearWarmup;
    s.warmup_steps = 10;
    EXPECT_FLOAT_EQ(LearningRate(s, 1), 0.1f);
    EXPECT_FLOAT_EQ(LearningRate(s, 5), 0.5f);
    EXPECT_FLOAT_EQ(LearningRate(s, 10), 1.0f);
    EXPECT_FLOAT_EQ(LearningRate(s, 11), 1.0f);

    s.kind = LrScheduleKind::kCosine;
    s.total_steps = 110;
    s.min_lr_ratio = 0.1f;
    EXPECT_FLOAT_EQ(LearningRate(s, 10), 1.0f);
    EXPECT_NEAR(LearningRate(s, 60), 0.55f, 1e-6); // halfway: floor + (1 - floor) / 2
    EXPECT_NEAR(LearningRate(s, 110), 0.1f, 1e-6);
    EXPECT_NEAR(LearningRate(s, 500), 0.1f, 1e-6); // past the horizon: the floor
    for (uint64_t t = 11; t < 110; ++t)
    {
        EXPECT_LE(LearningRate(s, t + 1), LearningRate(s, t)) << t;
    }
}

TEST(OptimizerConfig, ValidateNamesTheBadField)
{
    OptimizerConfig c;
    EXPECT_TRUE(c.Validate().ok());
    c.beta2 = 1.0f;
    EXPECT_NE(c.Validate().message().find("beta2"), std::string::npos);
    c = OptimizerConfig();
    c.eps = 0.0f;
    EXPECT_NE(c.Validate().message().find("eps"), std::string::npos);
    c = OptimizerConfig();
    c.lr.base_lr = -1.0f;
    EXPECT_FALSE(c.Validate().ok());
}

TEST(AdamW, MatchesDoublePrecisionReference)
{
    OptimizerConfig c;
    c.lr.base_lr = 1e-2f;
    c.weight_decay = 0.1f;
    const AdapterLayout layout = testing::SmallLayout();
    const int64_t n = layout.numel();
    ReplicatedState s;
    s.adapter = testing::InitialState(layout, 3);
    s.optimizer = NewOptimizerState(c, n);
    ASSERT_TRUE(CheckOptimizerState(c, s.optimizer, n).ok());

    std::vector<double> p(s.adapter.theta.begin(), s.adapter.theta.end()), m(n, 0.0), v(n, 0.0);
    testing::SplitMix rng(5);
    std::vector<float> g;
    for (int t = 1; t <= 50; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        ReplayStep(c, s, g, &s);
        const double lr = c.lr.base_lr;
        for (int64_t i = 0; i < n; ++i)
        {
            p[i] *= 1.0 - lr * c.weight_decay;
            m[i] = c.beta1 * m[i] + (1.0 - c.beta1) * g[i];
            v[i] = c.beta2 * v[i] + (1.0 - c.beta2) * double(g[i]) * g[i];
            const double mh = m[i] / (1.0 - std::pow(double(c.beta1), t));
            const double vh = v[i] / (1.0 - std::pow(double(c.beta2), t));
            p[i] -= lr * mh / (std::sqrt(vh) + c.eps);
        }
    }
    EXPECT_EQ(s.optimizer.step, 50u);
    EXPECT_NEAR(s.optimizer.beta1_prod, std::pow(0.9, 50), 1e-6);
    EXPECT_NEAR(s.optimizer.beta2_prod, std::pow(0.999, 50), 1e-6);
    for (int64_t i = 0; i < n; ++i)
    {
        ASSERT_NEAR(s.adapter.theta[i], p[i], 1e-5 + 1e-4 * std::fabs(p[i])) << i;
    }
}

TEST(Sgd, MatchesDoublePrecisionReference)
{
    OptimizerConfig c;
    c.kind = OptimizerKind::kSgdMomentum;
    c.lr.base_lr = 0.1f;
    c.momentum = 0.9f;
    c.weight_decay = 0.01f;
    const AdapterLayout layout = testing::SmallLayout();
    const int64_t n = layout.numel();
    ReplicatedState s;
    s.adapter = testing::InitialState(layout, 3);
    s.optimizer = NewOptimizerState(c, n);
    EXPECT_TRUE(s.optimizer.v.empty());
    std::vector<double> p(s.adapter.theta.begin(), s.adapter.theta.end()), buf(n, 0.0);
    testing::SplitMix rng(9);
    std::vector<float> g;
    for (int t = 1; t <= 30; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        ReplayStep(c, s, g, &s);
        for (int64_t i = 0; i < n; ++i)
        {
            const double d = g[i] + c.weight_decay * p[i];
            buf[i] = t == 1 ? d : c.momentum * buf[i] + d;
            p[i] -= c.lr.base_lr * buf[i];
        }
    }
    for (int64_t i = 0; i < n; ++i)
    {
        ASSERT_NEAR(s.adapter.theta[i], p[i], 1e-5 + 1e-4 * std::fabs(p[i])) << i;
    }
}

TEST(Replay, OutOfPlaceEqualsInPlaceBitForBit)
{
    OptimizerConfig c;
    c.weight_decay = 0.05f;
    const AdapterLayout layout = testing::MixedLayout();
    ReplicatedState a;
    a.adapter = testing::InitialState(layout, 11);
    a.optimizer = NewOptimizerState(c, layout.numel());
    ReplicatedState b = a;
    ReplicatedState scratch;
    testing::SplitMix rng(1);
    std::vector<float> g;
    for (int t = 0; t < 5; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        ReplayStep(c, a, g, &a);
        ReplayStep(c, b, g, &scratch);
        std::swap(b, scratch);
    }
    EXPECT_EQ(
        std::memcmp(a.adapter.theta.data(), b.adapter.theta.data(), a.adapter.theta.size() * 4), 0);
    EXPECT_EQ(a.optimizer.Hash(), b.optimizer.Hash());
}

TEST(Replay, CheckOptimizerStateRejectsWrongSizes)
{
    OptimizerConfig c;
    OptimizerState s = NewOptimizerState(c, 10);
    EXPECT_TRUE(CheckOptimizerState(c, s, 10).ok());
    EXPECT_FALSE(CheckOptimizerState(c, s, 11).ok());
    s.v.clear();
    EXPECT_FALSE(CheckOptimizerState(c, s, 10).ok());
}

} // namespace
} // namespace hilo
