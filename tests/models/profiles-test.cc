// GPU and LLM profile tables: they load, lookups name the known entries, and LoRA sizes match
// hand arithmetic (r x (d_in + d_out) per adapted linear, x layers).
#include "models/gpu-profile.h"
#include "models/llm-profile.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

TEST(GpuProfileTest, TableHasTheRequiredGpus)
{
    ASSERT_GE(ListGpus().size(), 6u);
    for (const char* name : {"H100-SXM", "A100-80GB", "L40S", "A10G", "RTX-4090", "T4"})
    {
        auto g = FindGpu(name);
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        EXPECT_GT(g->dense_tflops, 0);
        EXPECT_GT(g->mem_bw_gbs, 0);
        EXPECT_GT(g->mem_gb, 0);
    }
    auto h100 = FindGpu("H100-SXM").value();
    EXPECT_DOUBLE_EQ(h100.dense_tflops, 989.4);
    EXPECT_DOUBLE_EQ(h100.mem_bw_gbs, 3350);
    EXPECT_DOUBLE_EQ(h100.mem_gb, 80);
}

TEST(GpuProfileTest, UnknownNameListsKnownOnes)
{
    auto g = FindGpu("V100");
    EXPECT_EQ(g.status().code(), hilo::StatusCode::kNotFound);
    EXPECT_NE(g.status().message().find("H100-SXM"), std::string::npos);
    EXPECT_NE(g.status().message().find("T4"), std::string::npos);
}

TEST(LlmProfileTest, TableHasTheRequiredModels)
{
    for (const char* name : {"Llama-3.2-1B", "Qwen2.5-7B", "Llama-3-8B", "Llama-3-70B"})
    {
        EXPECT_TRUE(FindLlm(name).ok()) << name;
    }
    auto bad = FindLlm("gpt-2");
    EXPECT_EQ(bad.status().code(), hilo::StatusCode::kNotFound);
    EXPECT_NE(bad.status().message().find("Qwen2.5-7B"), std::string::npos);
}

TEST(LlmProfileTest, ParameterCountsMatchPublishedSizes)
{
    // Published totals: Qwen2.5-7B 7.62B (7,615,616,512 incl. 129,024 q/k/v biases), Llama-3-8B
    // 8.03B, Llama-3.2-1B 1.24B, Llama-3-70B 70.6B.
    EXPECT_EQ(FindLlm("Qwen2.5-7B")->Params(), 7615616512 - 129024);
    EXPECT_NEAR(FindLlm("Llama-3-8B")->Params() / 1e9, 8.03, 0.01);
    EXPECT_NEAR(FindLlm("Llama-3.2-1B")->Params() / 1e9, 1.236, 0.01);
    EXPECT_NEAR(FindLlm("Llama-3-70B")->Params() / 1e9, 70.55, 0.05);
}

TEST(LlmProfileTest, LoraParamsMatchHandArithmetic)
{
    const std::vector<std::string> all = LlmTargetNames();
    // Qwen2.5-7B, r = 1, per layer: q 3584+3584, k 3584+512, v 3584+512, o 3584+3584,
    // gate/up 3584+18944 each, down 18944+3584 = 90,112; x 28 layers.
    auto qwen = FindLlm("Qwen2.5-7B").value();
    EXPECT_EQ(qwen.LoraParams(1, all).value(), 90112 * 28);
    EXPECT_EQ(qwen.AdapterBytes(1, all).value(), 90112 * 28 * 2);
    EXPECT_EQ(qwen.LoraParams(64, all).value(), 64 * 90112 * 28); // 161,480,704
    // Llama-3-8B, r = 16 (PEFT prints 41,943,040 trainable): per layer r = 1: q 8192, k 5120,
    // v 5120, o 8192, gate/up/down 18432 each = 81,920; x 32 x 16.
    auto llama8 = FindLlm("Llama-3-8B").value();
    EXPECT_EQ(llama8.LoraParams(16, all).value(), 41943040);
    // Llama-3.2-1B r = 16: per layer r = 1: 4096 + 2560 + 2560 + 4096 + 3 x 10240 = 44,032.
    EXPECT_EQ(FindLlm("Llama-3.2-1B")->LoraParams(16, all).value(), 16 * 44032 * 16);
    // Llama-3-70B r = 1: 16384 + 9216 + 9216 + 16384 + 3 x 36864 = 161,792 per layer, x 80.
    EXPECT_EQ(FindLlm("Llama-3-70B")->LoraParams(1, all).value(), 161792 * 80);
    // Attention-only q, v.
    EXPECT_EQ(llama8.LoraParams(8, {"q", "v"}).value(), 8 * (8192 + 5120) * 32);
    EXPECT_FALSE(llama8.LoraParams(8, {"q", "mlp"}).ok());
    EXPECT_FALSE(llama8.LoraParams(0, all).ok());
}

TEST(LlmProfileTest, AdapterBytesTableOfTheNote)
{
    // results/workloads/README.md lists these (all-linear targets, bf16): name, r=1, 16, 64.
    struct Row
    {
        const char* name;
        int64_t bytes[3];
    };
    const Row rows[] = {{"Llama-3.2-1B", {1409024, 22544384, 90177536}},
                        {"Qwen2.5-7B", {5046272, 80740352, 322961408}},
                        {"Llama-3-8B", {5242880, 83886080, 335544320}},
                        {"Llama-3-70B", {25886720, 414187520, 1656750080}},
                        {"Qwen2.5-72B", {26316800, 421068800, 1684275200}}};
    const int64_t ranks[] = {1, 16, 64};
    for (const Row& row : rows)
    {
        for (int i = 0; i < 3; ++i)
        {
            EXPECT_EQ(FindLlm(row.name)->AdapterBytes(ranks[i], LlmTargetNames()).value(),
                      row.bytes[i])
                << row.name << " r=" << ranks[i];
        }
    }
}

TEST(LlmProfileTest, LoraLayoutAgreesWithParamCount)
{
    auto qwen = FindLlm("Qwen2.5-7B").value();
    auto layout = qwen.LoraLayout(16, LlmTargetNames());
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    EXPECT_EQ(layout->numel(), qwen.LoraParams(16, LlmTargetNames()).value());
    EXPECT_EQ(layout->size(), 28u * 7u * 2u);
    EXPECT_EQ(layout->matrix(0), (hilo::MatrixSpec{"layers.0.q.lora_A", 16, 3584}));
    EXPECT_EQ(layout->matrix(3), (hilo::MatrixSpec{"layers.0.k.lora_B", 512, 16}));
    EXPECT_EQ(layout->adapter_bytes(), qwen.AdapterBytes(16, LlmTargetNames()).value());
}

} // namespace
} // namespace models
