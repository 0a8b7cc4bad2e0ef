// Roofline compute models: hand-computed cases, monotonicity in tokens and model size, faster
// GPUs are faster, and misfits are errors.
#include "models/compute-model.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

GpuProfile
Gpu(const std::string& name)
{
    return FindGpu(name).value();
}

LlmProfile
Llm(const std::string& name)
{
    return FindLlm(name).value();
}

TEST(ComputeModelTest, TrainStepHandComputed)
{
    // Llama-3-8B: N = 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) + 128256 x 4096
    //           = 6,979,321,856 + 525,336,576 = 7,504,658,432; L(r=16) = 41,943,040.
    // FLOPs = 1000 x (4N + 6L) = 3.0270291968e13; H100 at 35%: 989.4e12 x 0.35 = 3.4629e14 FLOP/s.
    EXPECT_EQ(Llm("Llama-3-8B").MatmulParams(), 7504658432);
    const double s = TrainStepSeconds(Gpu("H100-SXM"), Llm("Llama-3-8B"), 16, 1000).value();
    EXPECT_NEAR(s, 3.0270291968e13 / 3.4629e14, 1e-9);
}

TEST(ComputeModelTest, RolloutHandComputed)
{
    // One sequence, prompt 100, one generated token, Llama-3-8B r=16 on an H100:
    //   N + L = 7,546,601,472
    //   prefill FLOPs = 100 x 2 x (N + L) + 2 x 32 x 100^2 x 4096 = 1.5093202944e12 + 2.62144e9
    //   prefill s = 1.5119417344e12 / (989.4e12 x 0.5)
    //   decode bytes = 2 x (N + L) + 100 x 131072 (KV/token = 32 x 2 x 1024 x 2) = 15,106,310,144
    //   decode s = 15,106,310,144 / (3350e9 x 0.7) (memory-bound)
    const double expected = 1.5119417344e12 / (989.4e12 * 0.5) + 15106310144.0 / (3350e9 * 0.7);
    const double s = RolloutSeconds(Gpu("H100-SXM"), Llm("Llama-3-8B"), 16, 1, 100, 1).value();
    EXPECT_NEAR(s, expected, 1e-9);
}

TEST(ComputeModelTest, DecodeReplayAndLoadHandComputed)
{
    // hilo: 32 B/param at 60% of 3350 GB/s, plus 3 launches of 5 us.
    const double hilo = DecodeReplaySeconds(Gpu("H100-SXM"), 1000000, "hilo").value();
    EXPECT_NEAR(hilo, 32e6 / (3350e9 * 0.6) + 15e-6, 1e-12);
    const double full = DecodeReplaySeconds(Gpu("H100-SXM"), 1000000, "full").value();
    EXPECT_LT(full, hilo);
    // 80 MB over PCIe Gen5 (64 GB/s at 80%) + 2 ms.
    EXPECT_NEAR(AdapterLoadSeconds(Gpu("H100-SXM"), 80000000), 80e6 / (64e9 * 0.8) + 2e-3, 1e-12);
    EXPECT_EQ(DecodeReplaySeconds(Gpu("T4"), 10, "magic").status().code(),
              hilo::StatusCode::kNotSupported);
}

TEST(ComputeModelTest, MonotoneInTokens)
{
    const GpuProfile g = Gpu("A100-80GB");
    const LlmProfile m = Llm("Qwen2.5-7B");
    double last_gen = 0;
    double last_prompt = 0;
    double last_seqs = 0;
    double last_train = 0;
    for (int64_t n : {1, 8, 64, 256, 1024})
    {
        const double gen = RolloutSeconds(g, m, 16, 8, 128, n).value();
        const double prompt = RolloutSeconds(g, m, 16, 8, n, 64).value();
        const double seqs = RolloutSeconds(g, m, 16, n, 128, 64).value();
        const double train = TrainStepSeconds(g, m, 16, n * 100).value();
        EXPECT_GT(gen, last_gen);
        EXPECT_GT(prompt, last_prompt);
        EXPECT_GT(seqs, last_seqs);
        EXPECT_GT(train, last_train);
        last_gen = gen;
        last_prompt = prompt;
        last_seqs = seqs;
        last_train = train;
    }
}

TEST(ComputeModelTest, MonotoneInModelSizeAndRank)
{
    const GpuNode g(Gpu("H100-SXM"), 8); // the 70B model needs tensor parallelism to fit
    const ComputeOptions tp8;
    double last_roll = 0;
    double last_train = 0;
    for (const char* name : {"Llama-3.2-1B", "Qwen2.5-7B", "Llama-3-8B", "Llama-3-70B"})
    {
        const double roll = RolloutSeconds(g, Llm(name), 16, 32, 256, 256, tp8).value() * 8;
        const double train = TrainStepSeconds(g, Llm(name), 16, 8192, tp8).value() * 8;
        EXPECT_GT(roll, last_roll) << name;
        EXPECT_GT(train, last_train) << name;
        last_roll = roll;
        last_train = train;
    }
    const hilo::AdapterLayout r16 = Llm("Qwen2.5-7B").LoraLayout(16, LlmTargetNames()).value();
    const hilo::AdapterLayout r64 = Llm("Qwen2.5-7B").LoraLayout(64, LlmTargetNames()).value();
    EXPECT_LT(EncodeSeconds(g, r16, "spar", 16).value(), EncodeSeconds(g, r64, "spar", 64).value());
    EXPECT_LT(EncodeSeconds(g, r64, "powersgd", 2).value(),
              EncodeSeconds(g, r64, "powersgd", 8).value());
    EXPECT_LT(EncodeSeconds(g, r64, "dense", 0).value(), EncodeSeconds(g, r64, "spar", 64).value());
    EXPECT_EQ(EncodeSeconds(g, r64, "zip", 1).status().code(), hilo::StatusCode::kNotSupported);
}

TEST(ComputeModelTest, FasterGpuIsFaster)
{
    const LlmProfile m = Llm("Llama-3.2-1B");
    const hilo::AdapterLayout layout = m.LoraLayout(64, LlmTargetNames()).value();
    // Ordered by both peak FLOPs and bandwidth.
    const std::vector<std::string> slow_to_fast{"T4", "A10G", "A100-80GB", "H100-SXM"};
    for (size_t i = 1; i < slow_to_fast.size(); ++i)
    {
        const GpuProfile slow = Gpu(slow_to_fast[i - 1]);
        const GpuProfile fast = Gpu(slow_to_fast[i]);
        EXPECT_LT(RolloutSeconds(fast, m, 64, 16, 256, 256).value(),
                  RolloutSeconds(slow, m, 64, 16, 256, 256).value())
            << fast.name;
        EXPECT_LT(TrainStepSeconds(fast, m, 64, 4096).value(),
                  TrainStepSeconds(slow, m, 64, 4096).value());
        EXPECT_LT(EncodeSeconds(fast, layout, "spar", 8).value(),
                  EncodeSeconds(slow, layout, "spar", 8).value());
        EXPECT_LT(DecodeReplaySeconds(fast, layout.numel(), "hilo").value(),
                  DecodeReplaySeconds(slow, layout.numel(), "hilo").value());
        EXPECT_LE(AdapterLoadSeconds(fast, layout.adapter_bytes()),
                  AdapterLoadSeconds(slow, layout.adapter_bytes()));
    }
    // Decode is memory-bound: the RTX 4090 (1008 GB/s) generates faster than the L40S (864 GB/s)
    // despite fewer TFLOPS.
    EXPECT_LT(RolloutSeconds(Gpu("RTX-4090"), m, 16, 1, 16, 512).value(),
              RolloutSeconds(Gpu("L40S"), m, 16, 1, 16, 512).value());
}

TEST(ComputeModelTest, MisfitsAreErrors)
{
    // 70B in bf16 (141 GB) does not fit one 80 GB GPU; fits eight.
    EXPECT_EQ(RolloutSeconds(Gpu("H100-SXM"), Llm("Llama-3-70B"), 16, 1, 16, 16).status().code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_FALSE(TrainStepSeconds(Gpu("T4"), Llm("Llama-3-8B"), 16, 100).ok());
    EXPECT_TRUE(
        RolloutSeconds(GpuNode(Gpu("H100-SXM"), 8), Llm("Llama-3-70B"), 16, 1, 16, 16).ok());
    // Many long sequences: KV does not fit at once, so they run in waves (still finite).
    // (A10G: ~19 GB free after weights, 4096 tokens x 32 KiB of KV per sequence: 142 at once.)
    const double one =
        RolloutSeconds(Gpu("A10G"), Llm("Llama-3.2-1B"), 16, 256, 2048, 2048).value();
    const double two =
        RolloutSeconds(Gpu("A10G"), Llm("Llama-3.2-1B"), 16, 512, 2048, 2048).value();
    EXPECT_GT(two, 1.5 * one);
    ComputeOptions bad;
    bad.decode_mbu = 1.5;
    EXPECT_FALSE(RolloutSeconds(Gpu("A10G"), Llm("Llama-3.2-1B"), 16, 1, 1, 1, bad).ok());
}

} // namespace
} // namespace models
