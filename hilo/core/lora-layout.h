// The LoRA layout of a transformer's adapter: for each layer and each target projection W (d_out x
// d_in), an A factor (rank x d_in) then a B factor (d_out x rank). Used for modelled-LLM shapes
// (benchmarks, wire-size scaling) and by the tiny real model, so both share one canonical order.
#ifndef HILO_CORE_LORA_LAYOUT_H
#define HILO_CORE_LORA_LAYOUT_H

#include "hilo/core/adapter-layout.h"

#include <string>
#include <vector>

namespace hilo
{

struct LoraTarget
{
    std::string name; // "q", "k", "v", "o", "gate", "up", "down"
    int64_t d_in{0};
    int64_t d_out{0};
};

struct TransformerShape
{
    int64_t layers{0};
    int64_t hidden{0};   // model width
    int64_t ffn{0};      // MLP inner width
    int64_t kv_width{0}; // key/value projection width (heads_kv x head_dim); = hidden without GQA
};

/// The seven usual targets of a Llama/Qwen block: q, k, v, o, gate, up, down.
std::vector<LoraTarget> AllLinearTargets(const TransformerShape& shape);

/// Layout "layers.<i>.<target>.lora_A" (rank x d_in), "layers.<i>.<target>.lora_B" (d_out x rank)
/// for every layer and target, in that order. REQUIRES: rank > 0 and a valid shape.
StatusOr<AdapterLayout> LoraLayout(int64_t layers, const std::vector<LoraTarget>& targets,
                                   int64_t rank);

/// Qwen2.5-7B shape (28 layers, hidden 3584, FFN 18944, KV width 512): at rank 64 on all seven
/// targets, 161,480,704 LoRA parameters. The reference layout of benchmarks.
TransformerShape Qwen25_7bShape();

} // namespace hilo

#endif // HILO_CORE_LORA_LAYOUT_H
