// Optimizer replay: agrees with an independent double-precision reference of PyTorch's AdamW and
// SGD semantics, in-place equals out-of-place bit for bit, and schedules are pure functions.
#include "hilo/optim/replay.h"
#include "tests/hilo/test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
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

/// The independent reference: one AdamW step in double over every coordinate, at step t. A
/// frozen second moment (`freeze_after` > 0, t past it) leaves a positive v as it is and takes its
/// bias correction at step `freeze_after`.
struct ReferenceAdamW
{
    std::vector<double> p, m, v;

    ReferenceAdamW(const std::vector<float>& theta)
      : p(theta.begin(), theta.end())
      , m(theta.size(), 0.0)
      , v(theta.size(), 0.0)
    {
    }

    void Step(const OptimizerConfig& c, int t, const std::vector<float>& g, int freeze_after = 0)
    {
        const bool frozen = freeze_after > 0 && t > freeze_after;
        const int tv = frozen ? freeze_after : t;
        const double lr = c.lr.base_lr;
        for (size_t i = 0; i < p.size(); ++i)
        {
            p[i] *= 1.0 - lr * c.weight_decay;
            m[i] = c.beta1 * m[i] + (1.0 - c.beta1) * g[i];
            if (!frozen || v[i] == 0.0)
                v[i] = c.beta2 * v[i] + (1.0 - c.beta2) * double(g[i]) * g[i];
            const double mh = m[i] / (1.0 - std::pow(double(c.beta1), t));
            const double vh = v[i] / (1.0 - std::pow(double(c.beta2), tv));
            p[i] -= lr * mh / (std::sqrt(vh) + c.eps);
        }
    }
};

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

    ReferenceAdamW ref(s.adapter.theta);
    testing::SplitMix rng(5);
    std::vector<float> g;
    for (int t = 1; t <= 50; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        ReplayStep(c, s, g, &s);
        ref.Step(c, t, g);
    }
    EXPECT_EQ(s.optimizer.step, 50u);
    EXPECT_NEAR(s.optimizer.beta1_prod, std::pow(0.9, 50), 1e-6);
    EXPECT_NEAR(s.optimizer.beta2_prod, std::pow(0.999, 50), 1e-6);
    for (int64_t i = 0; i < n; ++i)
    {
        ASSERT_NEAR(s.adapter.theta[i], ref.p[i], 1e-5 + 1e-4 * std::fabs(ref.p[i])) << i;
    }
}

// v_freeze_step = 5: the first five steps are AdamW's; from step 6 on v and beta2^t keep their
// step-5 values bit for bit while m, theta and beta1^t go on. The first 40 coordinates get no
// gradient until step 9: their v is 0 at the freeze, so it takes step 9's update and keeps it.
TEST(AdamW, FrozenSecondMomentMatchesDoublePrecisionReference)
{
    OptimizerConfig c;
    c.lr.base_lr = 1e-2f;
    c.v_freeze_step = 5;
    const AdapterLayout layout = testing::SmallLayout();
    const int64_t n = layout.numel();
    ReplicatedState s;
    s.adapter = testing::InitialState(layout, 3);
    s.optimizer = NewOptimizerState(c, n);
    ReferenceAdamW ref(s.adapter.theta);
    testing::SplitMix rng(5);
    std::vector<float> g, v_at_freeze;
    float beta2_prod_at_freeze = 0.0f;
    constexpr int64_t kLate = 40;
    ASSERT_GT(n, kLate);
    std::vector<float> late_v;
    for (int t = 1; t <= 30; ++t)
    {
        testing::FillGradient(layout, &rng, &g);
        if (t < 9)
            std::fill(g.begin(), g.begin() + kLate, 0.0f);
        ASSERT_TRUE(ReplayStep(c, s, g, &s).ok());
        ref.Step(c, t, g, 5);
        if (t == 5)
        {
            v_at_freeze = s.optimizer.v;
            beta2_prod_at_freeze = s.optimizer.beta2_prod;
            for (int64_t i = 0; i < kLate; ++i)
                ASSERT_EQ(s.optimizer.v[i], 0.0f) << i;
        }
        if (t == 9)
            late_v = s.optimizer.v;
    }
    EXPECT_EQ(s.optimizer.step, 30u);
    for (int64_t i = 0; i < kLate; ++i)
    {
        ASSERT_GT(late_v[i], 0.0f) << i;
        ASSERT_EQ(s.optimizer.v[i], late_v[i]) << i; // updated once, at step 9, then frozen
        v_at_freeze[i] = late_v[i];
    }
    EXPECT_TRUE(testing::SameBytes(s.optimizer.v, v_at_freeze));
    EXPECT_EQ(s.optimizer.beta2_prod, beta2_prod_at_freeze);
    EXPECT_NEAR(s.optimizer.beta1_prod, std::pow(0.9, 30), 1e-6);
    for (int64_t i = 0; i < n; ++i)
    {
        ASSERT_NEAR(s.adapter.theta[i], ref.p[i], 1e-5 + 1e-4 * std::fabs(ref.p[i])) << i;
    }
}

TEST(OptimizerConfig, FrozenSecondMomentIsCheckedAndFingerprinted)
{
    OptimizerConfig c;
    c.v_freeze_step = -1;
    EXPECT_NE(c.Validate().message().find("v_freeze_step"), std::string::npos);
    c.v_freeze_step = 3;
    EXPECT_TRUE(c.Validate().ok());
    c.kind = OptimizerKind::kSgdMomentum;
    EXPECT_NE(c.Validate().message().find("v_freeze_step"), std::string::npos);
    OptimizerConfig a, b;
    b.v_freeze_step = 3;
    EXPECT_NE(a.Fingerprint(), b.Fingerprint());
    b.v_freeze_step = 4;
    OptimizerConfig d;
    d.v_freeze_step = 3;
    EXPECT_NE(b.Fingerprint(), d.Fingerprint());
    // Unset, the field leaves the fingerprint (and every config hash made before it) as it was:
    // the default AdamW config's digest as the code before the field computed it, pinned.
    EXPECT_EQ(a.Fingerprint(), 0xbc16b2b471ca8005ull);
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
