// Multi-head latent attention (DeepSeek-V3): parameter counts against the published totals, the
// KV cache of the latent, LoRA on MLA's projections, and what tensor parallelism replicates.
#include "models/compute-model.h"
#include "models/gpu-node.h"
#include "models/llm-profile.h"

#include <gtest/gtest.h>

namespace models
{
namespace
{

LlmProfile
DeepSeekV3()
{
    return FindLlm("DeepSeek-V3").value();
}

TEST(MlaProfileTest, ParameterCountsMatchPublishedTotals)
{
    // DeepSeek-V3 technical report: 671B in all, 37B activated (without the multi-token
    // prediction module). Tolerance: 1% of the total, 2% of the activated count.
    const LlmProfile m = DeepSeekV3();
    ASSERT_TRUE(m.mla());
    ASSERT_TRUE(m.moe());
    EXPECT_NEAR(static_cast<double>(m.Params()) / 671e9, 1.0, 0.01);
    EXPECT_NEAR(static_cast<double>(m.ActiveParams()) / 37e9, 1.0, 0.02);
    // By hand, one layer's attention: q_a 1536 x 7168, q_b 128·(128+64) x 1536,
    // kv_a (512+64) x 7168, kv_b 128·(128+128) x 512, o 7168 x 128·128.
    const int64_t attention = int64_t{1536} * 7168 + int64_t{24576} * 1536 + int64_t{576} * 7168 +
                              int64_t{32768} * 512 + int64_t{7168} * 16384;
    // 3 dense MLP layers of 18432; 58 MoE layers: router 256 x 7168, 256 routed and 1 shared
    // expert of 3 x 7168 x 2048; embedding and output head 129280 x 7168 each.
    const int64_t expert = int64_t{3} * 7168 * 2048;
    const int64_t matmul = 61 * attention + 3 * (int64_t{3} * 7168 * 18432) +
                           58 * (int64_t{256} * 7168 + 257 * expert) + int64_t{129280} * 7168;
    EXPECT_EQ(m.MatmulParams(), matmul);
    // Norms: two of 7168 a layer plus the q and kv latents' (1536 + 512), and the final one.
    EXPECT_EQ(m.Params(), matmul + int64_t{129280} * 7168 + 61 * (2 * 7168 + 1536 + 512) + 7168);
    EXPECT_EQ(m.MatmulParams() - m.ActiveMatmulParams(), 58 * 248 * expert);
}

TEST(MlaProfileTest, KvCacheHoldsTheLatent)
{
    // 512 latent + 64 rotary values per token and layer, bf16: 61 x 576 x 2 bytes, where
    // 128 heads of K and V would need 61 x 2 x 128 x 128 x 2.
    const LlmProfile m = DeepSeekV3();
    EXPECT_EQ(m.KvBytesPerToken(), 61 * 576 * 2);
    // Models without MLA keep theirs: Qwen2.5-7B, 28 layers x K and V x 4 heads x 128 x 2 bytes.
    EXPECT_EQ(FindLlm("Qwen2.5-7B").value().KvBytesPerToken(), 28 * 2 * 4 * 128 * 2);
    EXPECT_EQ(FindLlm("Qwen2.5-7B").value().o_width(), 28 * 128);
}

TEST(MlaProfileTest, LoraOnLatentAttention)
{
    const LlmProfile m = DeepSeekV3();
    // Rank r on q (q_a and q_b), k (kv_a), v (kv_b), o: r x (d_in + d_out) each.
    const int64_t r = 16;
    const int64_t per_layer =
        r * ((7168 + 1536) + (1536 + 24576) + (7168 + 576) + (512 + 32768) + (16384 + 7168));
    EXPECT_EQ(m.LoraParams(r, {"q", "k", "v", "o"}).value(), 61 * per_layer);
    // Tensor parallelism: q_a and kv_a are replicated linears (both factors whole on every
    // GPU), q_b and kv_b column-parallel (A, r x d_in, replicated), o row-parallel (B,
    // d_out x r, replicated).
    const int64_t replicated = r * ((7168 + 1536) + 1536 + (7168 + 576) + 512 + 7168);
    EXPECT_EQ(m.LoraReplicatedParams(r, {"q", "k", "v", "o"}).value(), 61 * replicated);
    // Without MLA every replicated factor is r x hidden.
    const LlmProfile qwen = FindLlm("Qwen2.5-72B").value();
    EXPECT_EQ(qwen.LoraReplicatedParams(r, LlmTargetNames()).value(), 80 * 7 * r * 8192);
    // The layout names q's two modules and agrees with the count.
    const auto layout = m.LoraLayout(4, {"q"}).value();
    EXPECT_EQ(layout.numel(), m.LoraParams(4, {"q"}).value());
    bool q_b = false;
    for (const hilo::MatrixSpec& spec : layout.matrices())
        q_b |= spec.name == "layers.60.q.1.lora_B" && spec.rows == 24576 && spec.cols == 4;
    EXPECT_TRUE(q_b);
}

TEST(MlaProfileTest, MemoryCheckCountsTheLatentOnEveryGpu)
{
    // 671B bf16 weights (1.34 TB) fit no 8-GPU node of H100s; the refusal names the bytes.
    const LlmProfile m = DeepSeekV3();
    const GpuNode h100x8(FindGpu("H100-SXM").value(), 8, NodeParallel::kTensor);
    const hilo::Status refused = CheckNodeMemory(h100x8, m, 16, 4096, NodeWork::kRollout);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("DeepSeek-V3 does not fit a node of 8 x H100-SXM"),
              std::string::npos)
        << refused.message();
    // The KV cache of a 4,096-token sequence is the whole latent on each GPU: 4096 x 70,272 B.
    EXPECT_NE(refused.message().find("KV cache of one 4096-token sequence 287834112 bytes"),
              std::string::npos)
        << refused.message();
}

} // namespace
} // namespace models
