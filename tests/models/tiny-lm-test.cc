// TinyLm: LoRA at init is the identity on the base, gradients reach only the LoRA tensor, the
// layout's order is canonical and stable, the KV-cache sampler matches the full forward, and the
// same seed gives the same samples.
#include "models/tiny-lm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>

namespace models
{
namespace
{

TinyLmOptions
Small()
{
    TinyLmOptions o;
    o.vocab = 32;
    o.d_model = 32;
    o.layers = 2;
    o.heads = 4;
    o.context = 16;
    o.lora_rank = 4;
    o.lora_alpha = 8;
    o.seed = 7;
    return o;
}

at::Tensor
Tokens(int64_t batch, int64_t len, int64_t vocab)
{
    at::Tensor t = at::arange(batch * len, at::kLong).view({batch, len});
    return (t * 7 + 3).remainder(vocab);
}

TEST(TinyLmTest, LoraAtInitLeavesBaseOutputUnchanged)
{
    at::set_num_threads(1);
    TinyLm lm = TinyLm::Create(Small()).value();
    at::Tensor tokens = Tokens(3, 10, lm.options().vocab);
    at::Tensor base = lm.Forward(tokens, at::Tensor());
    at::Tensor lora0 = lm.LoraTensor(lm.InitialLora(/*seed=*/11));
    EXPECT_TRUE(at::equal(base, lm.Forward(tokens, lora0)));
    // A non-zero B changes the output.
    std::vector<float> theta = lm.InitialLora(/*seed=*/11);
    for (size_t i = 1; i < lm.layout().size(); i += 2)
    {
        for (int64_t j = 0; j < lm.layout().matrix(i).numel(); ++j)
        {
            theta[lm.layout().offset(i) + j] = 0.05f;
        }
    }
    EXPECT_GT((base - lm.Forward(tokens, lm.LoraTensor(theta))).abs().max().item<float>(), 1e-3);
}

TEST(TinyLmTest, InitialLoraHasRandomAAndZeroB)
{
    TinyLm lm = TinyLm::Create(Small()).value();
    std::vector<float> theta = lm.InitialLora(/*seed=*/3);
    EXPECT_EQ(theta, lm.InitialLora(/*seed=*/3));
    EXPECT_NE(theta, lm.InitialLora(/*seed=*/4));
    for (size_t i = 0; i < lm.layout().size(); ++i)
    {
        const hilo::MatrixSpec& m = lm.layout().matrix(i);
        double sum_abs = 0;
        for (int64_t j = 0; j < m.numel(); ++j)
        {
            const float v = theta[lm.layout().offset(i) + j];
            sum_abs += std::abs(v);
            EXPECT_LE(std::abs(v), 1.0 / std::sqrt(double(m.cols)) + 1e-7) << m.name;
        }
        if (i % 2 == 0)
        {
            EXPECT_GT(sum_abs, 0) << m.name;
        }
        else
        {
            EXPECT_EQ(sum_abs, 0) << m.name;
        }
    }
}

TEST(TinyLmTest, GradientsFlowOnlyIntoLora)
{
    at::set_num_threads(1);
    TinyLm lm = TinyLm::Create(Small()).value();
    at::Tensor lora = lm.LoraTensor(lm.InitialLora(/*seed=*/5)).requires_grad_(true);
    at::Tensor tokens = Tokens(2, 12, lm.options().vocab);
    at::Tensor loss = at::log_softmax(lm.Forward(tokens, lora), -1).select(-1, 3).mean();
    // The LoRA tensor is the only leaf that requires grad: the base is frozen.
    at::Tensor base_only = lm.Forward(tokens, at::Tensor());
    EXPECT_FALSE(base_only.requires_grad());
    ASSERT_TRUE(loss.requires_grad());
    loss.backward();
    ASSERT_TRUE(lora.grad().defined());
    EXPECT_EQ(lora.grad().numel(), lm.layout().numel());
    // At init B = 0: B factors get gradient, A factors none (dL/dA = scale B^T ... = 0).
    for (size_t i = 0; i < lm.layout().size(); ++i)
    {
        const hilo::MatrixSpec& m = lm.layout().matrix(i);
        const float g =
            lora.grad().narrow(0, lm.layout().offset(i), m.numel()).abs().sum().item<float>();
        if (i % 2 == 1)
        {
            EXPECT_GT(g, 0.0f) << m.name;
        }
        else
        {
            EXPECT_EQ(g, 0.0f) << m.name;
        }
    }
}

TEST(TinyLmTest, LayoutOrderIsCanonicalAndStable)
{
    TinyLmOptions o = Small();
    o.layers = 2;
    o.lora_targets = {"down", "q"}; // listed out of order: the layout still reads q before down
    TinyLm lm = TinyLm::Create(o).value();
    const std::vector<hilo::MatrixSpec> expected{
        {"layers.0.attn.q.lora_A", 4, 32},    {"layers.0.attn.q.lora_B", 32, 4},
        {"layers.0.mlp.down.lora_A", 4, 128}, {"layers.0.mlp.down.lora_B", 32, 4},
        {"layers.1.attn.q.lora_A", 4, 32},    {"layers.1.attn.q.lora_B", 32, 4},
        {"layers.1.mlp.down.lora_A", 4, 128}, {"layers.1.mlp.down.lora_B", 32, 4}};
    EXPECT_EQ(lm.layout().matrices(), expected);
    TinyLmOptions o2 = o;
    o2.lora_targets = {"q", "down"};
    o2.seed = 99; // the base seed does not change the layout
    EXPECT_EQ(TinyLm::Create(o2).value().layout().Fingerprint(), lm.layout().Fingerprint());

    // Full default targets: per layer q k v o up down, A before B.
    TinyLm all = TinyLm::Create(Small()).value();
    ASSERT_EQ(all.layout().size(), 2u * 6u * 2u);
    EXPECT_EQ(all.layout().matrix(0).name, "layers.0.attn.q.lora_A");
    EXPECT_EQ(all.layout().matrix(7).name, "layers.0.attn.o.lora_B");
    EXPECT_EQ(all.layout().matrix(8).name, "layers.0.mlp.up.lora_A");
    EXPECT_EQ(all.layout().matrix(9), (hilo::MatrixSpec{"layers.0.mlp.up.lora_B", 128, 4}));
    EXPECT_EQ(all.layout().matrix(12).name, "layers.1.attn.q.lora_A");
    // r x (d_in + d_out) per matrix pair: 4 x (4 x 64 + 2 x 160) per layer.
    EXPECT_EQ(all.layout().numel(), 2 * 4 * (4 * 64 + 2 * 160));
}

TEST(TinyLmTest, OptionsAreValidated)
{
    TinyLmOptions o = Small();
    o.heads = 5;
    EXPECT_EQ(TinyLm::Create(o).status().code(), hilo::StatusCode::kInvalidArgument);
    o = Small();
    o.lora_targets = {"q", "gate"};
    hilo::Status s = TinyLm::Create(o).status();
    EXPECT_EQ(s.code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("gate"), std::string::npos);
    o = Small();
    o.vocab = 70000;
    EXPECT_FALSE(TinyLm::Create(o).ok());
}

TEST(TinyLmTest, KvCacheSamplerMatchesFullForward)
{
    at::set_num_threads(1);
    TinyLm lm = TinyLm::Create(Small()).value();
    std::vector<float> theta = lm.InitialLora(/*seed=*/2);
    for (size_t i = 1; i < lm.layout().size(); i += 2) // non-zero B so LoRA matters
    {
        for (int64_t j = 0; j < lm.layout().matrix(i).numel(); ++j)
        {
            theta[lm.layout().offset(i) + j] = 0.02f * float((j % 5) - 2);
        }
    }
    at::Tensor lora = lm.LoraTensor(theta);
    at::Tensor prompts = Tokens(4, 5, lm.options().vocab);
    const double temperature = 0.8;
    Generation g = lm.Generate(prompts, /*gen_tokens=*/8, temperature, lora, /*rng_seed=*/17);
    ASSERT_EQ(g.tokens.sizes(), (at::IntArrayRef{4, 13}));
    EXPECT_TRUE(at::equal(g.tokens.narrow(1, 0, 5), prompts));
    at::Tensor full = at::log_softmax(lm.Forward(g.tokens, lora).narrow(1, 4, 8) / temperature, -1)
                          .gather(-1, g.tokens.narrow(1, 5, 8).unsqueeze(-1))
                          .squeeze(-1);
    EXPECT_LT((full - g.logp).abs().max().item<float>(), 1e-4);
    EXPECT_LT(g.logp.max().item<float>(), 1e-6);
}

TEST(TinyLmTest, SameSeedSameSamples)
{
    at::set_num_threads(1);
    TinyLm a = TinyLm::Create(Small()).value();
    TinyLm b = TinyLm::Create(Small()).value();
    at::Tensor prompts = Tokens(6, 4, a.options().vocab);
    Generation ga = a.Generate(prompts, 10, 1.0, a.LoraTensor(a.InitialLora(1)), 42);
    Generation gb = b.Generate(prompts, 10, 1.0, b.LoraTensor(b.InitialLora(1)), 42);
    EXPECT_TRUE(at::equal(ga.tokens, gb.tokens));
    EXPECT_TRUE(at::equal(ga.logp, gb.logp));
    Generation gc = a.Generate(prompts, 10, 1.0, a.LoraTensor(a.InitialLora(1)), 43);
    EXPECT_FALSE(at::equal(ga.tokens, gc.tokens));
}

TEST(TinyLmTest, PlantedDeltaChangesOnlyWhatItShould)
{
    at::set_num_threads(1);
    TinyLm lm = TinyLm::Create(Small()).value();
    at::Tensor tokens = Tokens(2, 8, lm.options().vocab);
    TinyLm same = lm.WithPlantedDelta(/*rank=*/2, /*decay=*/0.5, /*scale=*/0.0, /*seed=*/1);
    EXPECT_LT((same.Forward(tokens, at::Tensor()) - lm.Forward(tokens, at::Tensor()))
                  .abs()
                  .max()
                  .item<float>(),
              1e-5);
    TinyLm teacher = lm.WithPlantedDelta(/*rank=*/2, /*decay=*/0.5, /*scale=*/1.0, /*seed=*/1);
    EXPECT_GT((teacher.Forward(tokens, at::Tensor()) - lm.Forward(tokens, at::Tensor()))
                  .abs()
                  .max()
                  .item<float>(),
              0.1);
    // The base itself is untouched by making a teacher.
    EXPECT_TRUE(at::equal(lm.Forward(tokens, at::Tensor()),
                          TinyLm::Create(Small()).value().Forward(tokens, at::Tensor())));
}

} // namespace
} // namespace models
