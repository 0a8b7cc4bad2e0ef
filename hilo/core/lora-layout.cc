#include "hilo/core/lora-layout.h"

namespace hilo
{

std::vector<LoraTarget>
AllLinearTargets(const TransformerShape& s)
{
    return {
        {"q", s.hidden, s.hidden}, {"k", s.hidden, s.kv_width}, {"v", s.hidden, s.kv_width},
        {"o", s.hidden, s.hidden}, {"gate", s.hidden, s.ffn},   {"up", s.hidden, s.ffn},
        {"down", s.ffn, s.hidden},
    };
}

StatusOr<AdapterLayout>
LoraLayout(int64_t layers, const std::vector<LoraTarget>& targets, int64_t rank)
{
    if (rank <= 0 || layers <= 0)
    {
        return Status::InvalidArgument("LoRA layout needs rank > 0 and layers > 0");
    }
    std::vector<MatrixSpec> specs;
    for (int64_t l = 0; l < layers; ++l)
    {
        for (const LoraTarget& t : targets)
        {
            const std::string base = "layers." + std::to_string(l) + "." + t.name;
            specs.push_back({base + ".lora_A", rank, t.d_in});
            specs.push_back({base + ".lora_B", t.d_out, rank});
        }
    }
    return AdapterLayout::Create(std::move(specs));
}

TransformerShape
Qwen25_7bShape()
{
    return {/*layers=*/28, /*hidden=*/3584, /*ffn=*/18944, /*kv_width=*/512};
}

} // namespace hilo
