// The GPU and LLM catalogs, read from the models layer's profile tables.
#include "sim/cli/catalog.h"

#include "models/gpu-profile.h"
#include "models/llm-profile.h"

#include <cstdio>

namespace hilosim
{

std::vector<std::pair<std::string, std::string>>
KnownGpus()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const models::GpuProfile& g : models::ListGpus())
    {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%.0f dense bf16/fp16 TFLOPS, %.0f GB/s, %.0f GB",
                      g.dense_tflops, g.mem_bw_gbs, g.mem_gb);
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
        char buf[200];
        const auto r64 = l.LoraParams(64, models::LlmTargetNames());
        std::snprintf(buf, sizeof(buf),
                      "%lld layers, hidden %lld, %.2fB params; rank-64 all-linear LoRA %.1fM "
                      "params (%.0f MB bf16)",
                      static_cast<long long>(l.layers), static_cast<long long>(l.hidden),
                      static_cast<double>(l.Params()) / 1e9,
                      r64.ok() ? static_cast<double>(*r64) / 1e6 : 0.0,
                      r64.ok() ? static_cast<double>(*r64) * 2 / 1e6 : 0.0);
        out.emplace_back(l.name, buf);
    }
    return out;
}

} // namespace hilosim
