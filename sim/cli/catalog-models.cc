// The GPU and LLM catalogs, read from the models layer's profile tables.
#include "sim/cli/catalog.h"

#include "models/gpu-profile.h"
#include "models/llm-profile.h"

#include <cstdio>
#include <cstring>

namespace hilosim
{

std::vector<std::pair<std::string, std::string>>
KnownGpus()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const models::GpuProfile& g : models::ListGpus())
    {
        char buf[200];
        std::snprintf(buf, sizeof(buf),
                      "%.0f dense bf16/fp16 TFLOPS, %.0f GB/s, %.0f GB; GPU-to-GPU %s %.0f GB/s "
                      "per direction",
                      g.dense_tflops, g.mem_bw_gbs, g.mem_gb, g.interconnect.c_str(),
                      g.interconnect_gbs);
        out.emplace_back(g.name, buf);
    }
    return out;
}

std::vector<std::pair<std::string, std::string>>
KnownLlms()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const models::LlmProfile& l : models::ListLlms())
    {
        char buf[512];
        const auto r64 = l.LoraParams(64, models::LlmTargetNames());
        const double r64_m = r64.ok() ? static_cast<double>(*r64) / 1e6 : 0.0;
        int n = std::snprintf(buf, sizeof(buf),
                              "%lld layers, hidden %lld, %.2fB params; rank-64 all-linear LoRA "
                              "%.1fM params (%.0f MB bf16)",
                              static_cast<long long>(l.layers), static_cast<long long>(l.hidden),
                              static_cast<double>(l.Params()) / 1e9, r64_m, r64_m * 2);
        if (l.moe() && n > 0 && static_cast<size_t>(n) < sizeof(buf))
        {
            std::vector<std::string> with_experts = models::LlmTargetNames();
            with_experts.push_back("experts");
            const auto r64e = l.LoraParams(64, with_experts);
            const double r64e_m = r64e.ok() ? static_cast<double>(*r64e) / 1e6 : 0.0;
            std::snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n),
                          "; MoE: %lld experts (%lld active, width %lld, %lld shared), %.2fB "
                          "active params; with experts (llm_lora_experts) %.0fM (%.0f MB)",
                          static_cast<long long>(l.experts),
                          static_cast<long long>(l.active_experts),
                          static_cast<long long>(l.expert_intermediate),
                          static_cast<long long>(l.shared_experts),
                          static_cast<double>(l.ActiveParams()) / 1e9, r64e_m, r64e_m * 2);
        }
        const size_t used = std::strlen(buf);
        if (l.mla() && used < sizeof(buf))
        {
            std::snprintf(buf + used, sizeof(buf) - used,
                          "; latent attention: KV cache %lld + %lld per token and layer (%.1f KB "
                          "per token)",
                          static_cast<long long>(l.kv_lora_rank),
                          static_cast<long long>(l.rope_head_dim),
                          static_cast<double>(l.KvBytesPerToken()) / 1e3);
        }
        out.emplace_back(l.name, buf);
    }
    return out;
}

} // namespace hilosim
