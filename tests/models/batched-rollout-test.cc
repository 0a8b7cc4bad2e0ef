// Batched rollouts: RolloutMany for several workers that hold the same adapter returns, byte for
// byte, what one Rollout per worker returns -- same prompts, same samples, same behaviour
// log-probs, same rewards -- on both workloads, with an adapter whose B factors are non-zero (so
// the LoRA path really shapes the samples), and at a realistic width.
#include "models/lm-workload.h"
#include "models/seeded-rng.h"
#include "models/workload.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

WorkloadConfig
Config(const std::string& kind, int64_t d_model)
{
    WorkloadConfig c;
    c.kind = kind;
    c.seed = 9;
    c.vocab = 64;
    c.d_model = d_model;
    c.layers = 2;
    c.heads = 4;
    c.context = 32;
    c.lora_rank = 8;
    c.lora_alpha = 16;
    c.prompts_per_worker = 3;
    c.group_size = 2;
    c.prompt_tokens = 6;
    c.gen_tokens = 10;
    return c;
}

// A trained-looking adapter: every parameter random, B included.
std::vector<float>
RandomTheta(const Workload& w, uint64_t seed)
{
    std::vector<float> theta(static_cast<size_t>(w.layout().numel()));
    SeededRng rng(seed);
    for (float& x : theta)
        x = static_cast<float>(0.2 * (rng.Uniform() - 0.5));
    return theta;
}

void
ExpectBatchedEqualsSeparate(const WorkloadConfig& c)
{
    auto made = Workload::Create(c);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Workload& w = **made;
    const std::vector<float> theta = RandomTheta(w, 77);
    const std::vector<uint32_t> workers{0, 1, 2, 5, 63};
    for (uint64_t step : {1u, 4u})
    {
        std::vector<RolloutInfo> infos;
        auto many = w.RolloutMany(theta, step, workers, &infos);
        ASSERT_TRUE(many.ok()) << many.status().ToString();
        ASSERT_EQ(many->size(), workers.size());
        for (size_t i = 0; i < workers.size(); ++i)
        {
            RolloutInfo info;
            auto one = w.Rollout(theta, step, workers[i], &info);
            ASSERT_TRUE(one.ok());
            EXPECT_EQ((*many)[i], *one) << c.kind << " step " << step << " worker " << workers[i];
            EXPECT_EQ(infos[i].sequences, info.sequences);
            EXPECT_EQ(infos[i].generated_tokens, info.generated_tokens);
        }
        // Different workers really sample differently (the comparison above is not vacuous).
        EXPECT_NE((*many)[0], (*many)[1]);
    }
    // And the adapter matters: the initial adapter (B = 0) samples something else.
    auto initial = w.RolloutMany(w.InitialAdapter().theta, 1, workers, nullptr);
    auto trained = w.RolloutMany(theta, 1, workers, nullptr);
    ASSERT_TRUE(initial.ok() && trained.ok());
    EXPECT_NE((*initial)[0], (*trained)[0]);
}

TEST(BatchedRollout, DistillationSamplesExactlyAsOneCallPerWorker)
{
    ExpectBatchedEqualsSeparate(Config("distill", 32));
}

TEST(BatchedRollout, GrpoSamplesAndRewardsExactlyAsOneCallPerWorker)
{
    ExpectBatchedEqualsSeparate(Config("grpo", 32));
}

TEST(BatchedRollout, WideModelSamplesExactlyAsOneCallPerWorker)
{
    ExpectBatchedEqualsSeparate(Config("distill", 256));
}

TEST(BatchedRollout, FleetLargerThanOneGenerationSamplesExactlyAsOneCallPerWorker)
{
    // 6 rows per worker: RolloutMany generates kRolloutChunkRows / 6 workers at a time, so 200
    // workers take two generations; every worker, on both sides of the cut, samples as alone.
    auto made = Workload::Create(Config("distill", 32));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Workload& w = **made;
    const std::vector<float> theta = RandomTheta(w, 78);
    std::vector<uint32_t> workers(200);
    for (uint32_t i = 0; i < workers.size(); ++i)
    {
        workers[i] = 3 * i;
    }
    ASSERT_GT(int64_t(workers.size()) * 6, kRolloutChunkRows);
    auto many = w.RolloutMany(theta, 2, workers, nullptr);
    ASSERT_TRUE(many.ok()) << many.status().ToString();
    ASSERT_EQ(many->size(), workers.size());
    for (size_t i = 0; i < workers.size(); ++i)
    {
        auto one = w.Rollout(theta, 2, workers[i], nullptr);
        ASSERT_TRUE(one.ok());
        EXPECT_EQ((*many)[i], *one) << "worker " << workers[i];
    }
}

TEST(BatchedRollout, WrongThetaSizeIsAnError)
{
    auto made = Workload::Create(Config("distill", 32));
    ASSERT_TRUE(made.ok());
    auto r = (*made)->RolloutMany(std::vector<float>(3, 0.0f), 1, {0, 1}, nullptr);
    EXPECT_EQ(r.status().code(), hilo::StatusCode::kInvalidArgument);
}

} // namespace
} // namespace models
