// Mixture-of-experts profiles: parameter counts against the published totals, the weights a
// decode step touches, LoRA with and without the routed experts, and the shape checks of the
// data file.
#include "models/compute-model.h"
#include "models/llm-profile.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

LlmProfile
Llm(const std::string& name)
{
    return FindLlm(name).value();
}

std::vector<std::string>
WithExperts()
{
    std::vector<std::string> t = LlmTargetNames();
    t.push_back("experts");
    return t;
}

TEST(MoeProfileTest, ParameterCountsMatchPublishedTotals)
{
    // Model cards: Qwen3-30B-A3B 30.5B in all, 3.3B activated; Qwen3-235B-A22B 235B, 22B.
    // Tolerance 1% of the total and 2% of the activated count (the cards round to the 0.1B
    // and 1B, and the profiles leave out the q/k norms, 256 weights a layer).
    const LlmProfile small = Llm("Qwen3-30B-A3B");
    EXPECT_TRUE(small.moe());
    EXPECT_NEAR(static_cast<double>(small.Params()) / 30.5e9, 1.0, 0.01);
    EXPECT_NEAR(static_cast<double>(small.ActiveParams()) / 3.3e9, 1.0, 0.02);
    const LlmProfile large = Llm("Qwen3-235B-A22B");
    EXPECT_NEAR(static_cast<double>(large.Params()) / 235e9, 1.0, 0.01);
    EXPECT_NEAR(static_cast<double>(large.ActiveParams()) / 22e9, 1.0, 0.02);
    // By hand, Qwen3-30B-A3B: attention 2 x 2048 x 4096 + 2 x 2048 x 512 = 18,874,368 a layer;
    // router 128 x 2048 = 262,144; experts 128 x 3 x 2048 x 768 = 603,979,776; 48 layers;
    // output head and embedding 151,936 x 2048 = 311,164,928 each; norms 2 x 2048 a layer + 2048.
    const int64_t layer = 18874368 + 262144 + 603979776;
    EXPECT_EQ(small.MatmulParams(), 48 * layer + 311164928);
    EXPECT_EQ(small.Params(), 48 * layer + 2 * 311164928 + 48 * 2 * 2048 + 2048);
    EXPECT_EQ(small.MatmulParams() - small.ActiveMatmulParams(),
              int64_t{48} * 120 * 3 * 2048 * 768);
    // Dense models: active = all.
    EXPECT_EQ(Llm("Qwen2.5-72B").ActiveParams(), Llm("Qwen2.5-72B").Params());
    EXPECT_FALSE(Llm("Llama-3.1-70B").moe());
}

TEST(MoeProfileTest, DecodeTouchesMoreExpertsAsTheBatchGrows)
{
    const LlmProfile m = Llm("Qwen3-235B-A22B");
    // One token reads its own 8 experts; a large batch reads nearly all 128 (uniform routing).
    EXPECT_DOUBLE_EQ(m.TouchedMatmulParams(1), static_cast<double>(m.ActiveMatmulParams()));
    EXPECT_GT(m.TouchedMatmulParams(8), m.TouchedMatmulParams(1));
    EXPECT_NEAR(m.TouchedMatmulParams(4096) / static_cast<double>(m.MatmulParams()), 1.0, 1e-9);
    // Expected distinct experts for b = 2: 128 x (1 - (120/128)^2) = 15.5 per MoE layer.
    const double two = static_cast<double>(m.ActiveMatmulParams()) +
                       94.0 * (128.0 * (1.0 - (120.0 / 128.0) * (120.0 / 128.0)) - 8.0) *
                           static_cast<double>(m.expert_params());
    EXPECT_NEAR(m.TouchedMatmulParams(2), two, 1.0);
    // Single-sequence decode is bound by the active weights: the 30B MoE generates faster than
    // the dense 7B on the same GPU, though it holds four times the weights.
    const GpuProfile h100 = FindGpu("H100-SXM").value();
    EXPECT_LT(RolloutSeconds(h100, Llm("Qwen3-30B-A3B"), 16, 1, 128, 256).value(),
              RolloutSeconds(h100, Llm("Qwen2.5-7B"), 16, 1, 128, 256).value());
}

TEST(MoeProfileTest, LoraWithAndWithoutExperts)
{
    // Qwen3-235B-A22B has no dense MLP and no shared expert: the default targets adapt attention
    // only; "experts" adds gate, up and down of all 128 experts in each of the 94 layers.
    const LlmProfile m = Llm("Qwen3-235B-A22B");
    const int64_t attention = 64 * ((8192 + 4096) + 2 * (512 + 4096) + (4096 + 8192));
    EXPECT_EQ(m.LoraParams(64, LlmTargetNames()).value(), 94 * attention);
    const int64_t experts = 64 * 128 * 3 * (4096 + 1536);
    EXPECT_EQ(m.LoraParams(64, WithExperts()).value(), 94 * (attention + experts));
    // Orders of magnitude: ~73x here.
    EXPECT_GT(m.LoraParams(64, WithExperts()).value(),
              50 * m.LoraParams(64, LlmTargetNames()).value());
    // The layout agrees with the count and names the experts.
    const auto layout = Llm("Qwen3-30B-A3B").LoraLayout(4, WithExperts()).value();
    EXPECT_EQ(layout.numel(), Llm("Qwen3-30B-A3B").LoraParams(4, WithExperts()).value());
    bool found = false;
    for (const hilo::MatrixSpec& spec : layout.matrices())
        found |=
            spec.name == "layers.0.experts.127.down.lora_B" && spec.rows == 2048 && spec.cols == 4;
    EXPECT_TRUE(found);
    // A dense model has no experts to adapt: the target adds nothing.
    EXPECT_EQ(Llm("Qwen2.5-7B").LoraParams(8, WithExperts()).value(),
              Llm("Qwen2.5-7B").LoraParams(8, LlmTargetNames()).value());
    EXPECT_EQ(m.LoraParams(8, {"q", "experts", "q"}).status().code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(m.LoraParams(8, {"mlp"}).status().message().find("experts"), std::string::npos);
}

} // namespace
} // namespace models
