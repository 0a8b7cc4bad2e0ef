// Multi-GPU nodes: a tensor-parallel rollout against a hand-computed roofline, replicas deal out
// sequences, the adapter's per-GPU share, and the per-GPU memory refusal naming the GPU, the model
// and the bytes.
#include "models/compute-model.h"
#include "models/gpu-node.h"

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

TEST(GpuNodeTest, TensorParallelRolloutHandComputed)
{
    // Llama-3-8B, rank 16 on all seven targets, one sequence, prompt 100, one generated token, on
    // a node of 2 x H100-SXM (tp). N = 7,504,658,432; L = 41,943,040, of which r x hidden per
    // module is replicated: 16 x 4096 x (7 x 32) = 14,680,064; the rest, 27,262,976, is split:
    // L_g = 14,680,064 + 13,631,488 = 28,311,552.
    //   prefill FLOPs = 100 x 2 x (N + L) + 2 x 32 x 100^2 x 4096 = 1.5119417344e12, on two GPUs
    //     at 50% of 989.4e12 each;
    //   prefill all-reduces: 2 per layer of 100 tokens x 4096 x 2 B = 819,200 B; ring over 2 GPUs
    //     moves 2 x (1/2) x 819,200 B over NVLink at 450e9 x 0.7, plus 20 us each;
    //   decode bytes per GPU = 2 x (N/2 + L_g) + 100 x KV per token per GPU (32 layers x 2 x
    //     4 of 8 KV heads x 128 x 2 B = 65,536) = 7,504,658,432 + 56,623,104 + 6,553,600
    //     = 7,567,835,136 at 70% of 3350e9 (memory-bound: its FLOPs take ~15 us);
    //   decode all-reduces: 2 per layer of 4096 x 2 B = 8,192 B.
    const double link = 450e9 * 0.7;
    const double expected = 1.5119417344e12 / (989.4e12 * 2 * 0.5) +
                            64 * (819200.0 / link + 20e-6) + 7567835136.0 / (3350e9 * 0.7) +
                            64 * (8192.0 / link + 20e-6);
    const GpuNode node(Gpu("H100-SXM"), 2, NodeParallel::kTensor);
    const double s = RolloutSeconds(node, Llm("Llama-3-8B"), 16, 1, 100, 1).value();
    EXPECT_NEAR(s, expected, 1e-12);
    // The same GPU alone is slower (it streams all the weights) but pays no all-reduce.
    EXPECT_GT(RolloutSeconds(Gpu("H100-SXM"), Llm("Llama-3-8B"), 16, 1, 100, 1).value(), s);
}

TEST(GpuNodeTest, PcieAllReducesCostMoreThanNvlink)
{
    // The same model split over 8 GPUs: per-layer all-reduces over PCIe (A10G, 32 GB/s) cost
    // more per generated token than over NVLink; both fit where one A10G does not.
    const LlmProfile m = Llm("Qwen2.5-72B");
    ComputeOptions no_latency;
    no_latency.allreduce_latency_s = 0;
    const double a10g = RolloutSeconds(GpuNode(Gpu("A10G"), 8), m, 16, 8, 512, 64).value();
    const double h100 = RolloutSeconds(GpuNode(Gpu("H100-SXM"), 8), m, 16, 8, 512, 64).value();
    EXPECT_GT(a10g, h100);
    // Latency per all-reduce is part of the cost: removing it makes the rollout faster.
    EXPECT_LT(RolloutSeconds(GpuNode(Gpu("A10G"), 8), m, 16, 8, 512, 64, no_latency).value(), a10g);
}

TEST(GpuNodeTest, ReplicasDealOutSequences)
{
    // dp: four engines each serve a quarter of the sequences, in parallel.
    const LlmProfile m = Llm("Qwen2.5-7B");
    const GpuNode dp4(Gpu("A100-80GB"), 4, NodeParallel::kReplicas);
    EXPECT_DOUBLE_EQ(RolloutSeconds(dp4, m, 16, 32, 128, 64).value(),
                     RolloutSeconds(Gpu("A100-80GB"), m, 16, 8, 128, 64).value());
    // Every replica decodes and replays the whole update: no faster than one GPU.
    const AdapterShards adapter(1000000, 400000);
    EXPECT_DOUBLE_EQ(DecodeReplaySeconds(dp4, adapter, "hilo").value(),
                     DecodeReplaySeconds(Gpu("A100-80GB"), adapter, "hilo").value());
    // Training is data-parallel: more GPUs, less time, plus the gradient all-reduce.
    EXPECT_LT(TrainStepSeconds(dp4, m, 16, 100000).value(),
              TrainStepSeconds(Gpu("A100-80GB"), m, 16, 100000).value());
}

TEST(GpuNodeTest, AdapterShareAndDecodeUnderTensorParallelism)
{
    // 1,000,000 parameters, 400,000 replicated: each of 8 GPUs holds 400,000 + 75,000.
    const AdapterShards adapter(1000000, 400000);
    const GpuNode tp8(Gpu("H100-SXM"), 8);
    EXPECT_EQ(adapter.PerGpu(tp8), 475000);
    EXPECT_EQ(AdapterShards(1000001, 1).PerGpu(tp8), 1 + 125000); // ceil
    EXPECT_EQ(adapter.PerGpu(Gpu("H100-SXM")), 1000000);
    // Decode + replay streams 32 B per parameter of the GPU's share.
    EXPECT_NEAR(DecodeReplaySeconds(tp8, adapter, "hilo").value(),
                475000.0 * 32 / (3350e9 * 0.6) + 15e-6, 1e-15);
    // The replicated factors are r x hidden per module: Llama-3-8B at rank 16, all linears.
    EXPECT_EQ(Llm("Llama-3-8B").LoraReplicatedParams(16, LlmTargetNames()).value(),
              16 * 4096 * 7 * 32);
}

TEST(GpuNodeTest, MemoryRefusalNamesGpuModelAndBytes)
{
    // Qwen2.5-72B: 72,705,384,448 parameters, 145,410,768,896 bytes of bf16 weights; one A10G
    // holds 24 GB (21.6 GB usable at the default headroom 0.9).
    const hilo::Status one =
        CheckNodeMemory(Gpu("A10G"), Llm("Qwen2.5-72B"), 16, 1024, NodeWork::kRollout);
    ASSERT_EQ(one.code(), hilo::StatusCode::kInvalidArgument);
    const std::string& m = one.message();
    EXPECT_NE(m.find("Qwen2.5-72B does not fit a node of 1 x A10G for rollouts"), std::string::npos)
        << m;
    EXPECT_NE(m.find("weights 145410768896 bytes (145.4 GB)"), std::string::npos) << m;
    EXPECT_NE(m.find("holds 24000000000 bytes (24.0 GB), 21600000000 bytes (21.6 GB) usable"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("KV cache of one 1024-token sequence"), std::string::npos) << m;
    // Split eight ways it fits for rollouts; the same node cannot train it at rank 4096 (16 B
    // per adapter parameter), and says so.
    const GpuNode tp8(Gpu("A10G"), 8);
    EXPECT_TRUE(CheckNodeMemory(tp8, Llm("Qwen2.5-72B"), 16, 1024, NodeWork::kRollout).ok());
    const hilo::Status train = CheckNodeMemory(tp8, Llm("Qwen2.5-72B"), 4096, 0, NodeWork::kTrain);
    EXPECT_NE(train.message().find("8 x A10G (tp) for training"), std::string::npos)
        << train.message();
    EXPECT_NE(train.message().find("gradient and AdamW state"), std::string::npos);
    // Replicas do not split the model: 8 x A10G (dp) is still one A10G per copy.
    EXPECT_FALSE(CheckNodeMemory(GpuNode(Gpu("A10G"), 8, NodeParallel::kReplicas),
                                 Llm("Qwen2.5-72B"), 16, 1024, NodeWork::kRollout)
                     .ok());
    // The rollout model refuses the same way.
    EXPECT_EQ(
        RolloutSeconds(Gpu("A10G"), Llm("Qwen2.5-72B"), 16, 1, 512, 512).status().message(),
        CheckNodeMemory(Gpu("A10G"), Llm("Qwen2.5-72B"), 16, 1024, NodeWork::kRollout).message());
}

TEST(GpuNodeTest, ParallelNamesAreStrict)
{
    EXPECT_EQ(ParseNodeParallel("tp").value(), NodeParallel::kTensor);
    EXPECT_EQ(ParseNodeParallel("dp").value(), NodeParallel::kReplicas);
    const auto bad = ParseNodeParallel("pp");
    EXPECT_EQ(bad.status().code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("allowed: tp"), std::string::npos);
    EXPECT_EQ(GpuNode(Gpu("A10G"), 8).Describe(), "8 x A10G (tp)");
    EXPECT_EQ(GpuNode(Gpu("A10G")).Describe(), "A10G");
    EXPECT_FALSE(RolloutSeconds(GpuNode(Gpu("A10G"), 0), Llm("Llama-3.2-1B"), 8, 1, 1, 1).ok());
}

} // namespace
} // namespace models
