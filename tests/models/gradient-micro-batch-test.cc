// Workload::Gradient in micro-batches (WorkloadConfig::micro_batch_sequences): the passes hold at
// most the configured sequences, their weighted sum is the one-pass gradient up to float rounding,
// a limit that covers the whole batch is the one-pass computation bit for bit, and a bad limit is
// refused naming the field.
#include "models/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace models
{
namespace
{

/// The default tiny model (d_model 64), 3 prompts x 4 completions = 12 sequences per worker.
WorkloadConfig
Small(const std::string& kind)
{
    WorkloadConfig c;
    c.kind = kind;
    c.seed = 11;
    c.prompts_per_worker = 3;
    c.eval_prompts = 8;
    c.grad_clip_norm = 0; // compare raw gradients
    return c;
}

/// An adapter away from the initial one (B = 0 there), so that every factor gets a gradient.
std::vector<float>
Perturbed(std::vector<float> theta)
{
    for (size_t i = 0; i < theta.size(); ++i)
    {
        theta[i] += 0.05f * std::sin(0.37f * static_cast<float>(i));
    }
    return theta;
}

struct GradientRun
{
    std::vector<float> grad;
    GradientInfo info;
};

/// The gradient of 5 workers' batches (60 sequences) at a perturbed adapter under `micro`.
GradientRun
GradientWith(const std::string& kind, int64_t micro)
{
    WorkloadConfig c = Small(kind);
    c.micro_batch_sequences = micro;
    auto made = Workload::Create(c);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    const std::unique_ptr<Workload> wl = std::move(made).value();
    const std::vector<float> theta = Perturbed(wl->InitialAdapter().theta);
    std::vector<std::string> batches;
    for (uint32_t w = 0; w < 5; ++w)
    {
        batches.push_back(wl->Rollout(theta, 2, w, nullptr).value());
    }
    GradientRun r;
    r.grad = wl->Gradient(theta, batches, &r.info).value();
    return r;
}

TEST(GradientMicroBatchTest, PassesAreBoundedAndSumToTheOnePassGradient)
{
    for (const char* kind : {"distill", "grpo"})
    {
        const GradientRun whole = GradientWith(kind, 0);
        EXPECT_EQ(whole.info.passes, 1) << kind;
        EXPECT_EQ(whole.info.max_pass_sequences, 60) << kind;
        // 8 sequences: two groups, so passes cut through workers' batches (12 sequences each).
        for (int64_t micro : {8, 12, 28})
        {
            const GradientRun parts = GradientWith(kind, micro);
            EXPECT_EQ(parts.info.max_pass_sequences, micro) << kind << " " << micro;
            EXPECT_EQ(parts.info.passes, (60 + micro - 1) / micro) << kind << " " << micro;
            EXPECT_EQ(parts.info.tokens, whole.info.tokens);
            ASSERT_EQ(parts.grad.size(), whole.grad.size());
            double diff = 0;
            double norm = 0;
            for (size_t i = 0; i < whole.grad.size(); ++i)
            {
                diff += std::pow(double(parts.grad[i]) - whole.grad[i], 2);
                norm += std::pow(double(whole.grad[i]), 2);
            }
            ASSERT_GT(norm, 0) << kind;
            EXPECT_LT(std::sqrt(diff / norm), 1e-5) << kind << " " << micro;
            // GRPO's on-policy loss is ~0 (advantages sum to zero per group): absolute there.
            EXPECT_NEAR(parts.info.loss, whole.info.loss,
                        1e-6 * std::max(1.0, std::abs(whole.info.loss)))
                << kind << " " << micro;
            EXPECT_NEAR(parts.info.grad_norm, whole.info.grad_norm, 1e-5 * whole.info.grad_norm)
                << kind << " " << micro;
        }
    }
}

TEST(GradientMicroBatchTest, SameLimitSameBytesAndACoveringLimitIsOnePass)
{
    for (const char* kind : {"distill", "grpo"})
    {
        const GradientRun a = GradientWith(kind, 8);
        const GradientRun b = GradientWith(kind, 8);
        EXPECT_EQ(a.grad, b.grad) << kind;
        EXPECT_EQ(a.info.loss, b.info.loss) << kind;
        // A limit at or above the batch takes the one-pass path: the default's bytes.
        const GradientRun whole = GradientWith(kind, 0);
        const GradientRun covering = GradientWith(kind, 60);
        const GradientRun above = GradientWith(kind, 64);
        EXPECT_EQ(covering.grad, whole.grad) << kind;
        EXPECT_EQ(above.grad, whole.grad) << kind;
        EXPECT_EQ(above.info.loss, whole.info.loss) << kind;
        EXPECT_EQ(above.info.passes, 1) << kind;
    }
}

TEST(GradientMicroBatchTest, LimitMustBeWholeGroups)
{
    for (int64_t bad : {-4, 6})
    {
        WorkloadConfig c = Small("grpo");
        c.micro_batch_sequences = bad;
        const hilo::Status s = c.Validate();
        ASSERT_FALSE(s.ok()) << bad;
        EXPECT_EQ(s.code(), hilo::StatusCode::kInvalidArgument);
        EXPECT_NE(s.message().find("workload.micro_batch_sequences"), std::string::npos)
            << s.message();
        EXPECT_NE(s.message().find("group_size (4)"), std::string::npos) << s.message();
    }
}

} // namespace
} // namespace models
