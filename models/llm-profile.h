// LlmProfile: the shapes of a modelled LLM (decoder-only, grouped-query attention, gated MLP),
// read from models/data/llms.csv. From them: parameter counts, LoRA adapter sizes at any rank and
// target set, and the AdapterLayout a real adapter of that model would have. The simulator scales
// wire bytes by (modelled adapter params / real adapter params).
//
// LoRA on a linear of shape d_out x d_in at rank r has r x (d_in + d_out) parameters (A: r x d_in,
// B: d_out x r). Target modules and their (d_out, d_in):
//   q: (heads*head_dim, hidden)   k, v: (kv_heads*head_dim, hidden)   o: (hidden, heads*head_dim)
//   gate, up: (intermediate, hidden)   down: (hidden, intermediate)
// Biases (Qwen2.5 has q/k/v biases) and norm weights are not adapted and are left out of the
// matmul counts; Params() counts norms but not biases (0.002% of Qwen2.5-7B).
#ifndef MODELS_LLM_PROFILE_H
#define MODELS_LLM_PROFILE_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace models
{

/// Every LoRA target module, in canonical order: q k v o gate up down ("all-linear").
const std::vector<std::string>& LlmTargetNames();

struct LlmProfile
{
    std::string name;
    int64_t layers{0};
    int64_t hidden{0};
    int64_t intermediate{0};
    int64_t heads{0};
    int64_t kv_heads{0};
    int64_t head_dim{0};
    int64_t vocab{0};
    bool tied_embeddings{false};

    int64_t q_width() const { return heads * head_dim; }
    int64_t kv_width() const { return kv_heads * head_dim; }

    /// (d_out, d_in) of `target`; kInvalidArgument names the allowed targets.
    hilo::StatusOr<std::pair<int64_t, int64_t>> ModuleShape(const std::string& target) const;
    /// Weights of the matmuls one token passes through: all block linears + the output head.
    int64_t MatmulParams() const;
    /// All parameters: block linears, norms, embedding and (untied) output head.
    int64_t Params() const;
    /// bf16 KV cache bytes per token of context (all layers, K and V).
    int64_t KvBytesPerToken() const { return layers * 2 * kv_width() * 2; }

    /// LoRA parameters at `rank` on `targets` in every layer. Errors: rank < 1, unknown target.
    hilo::StatusOr<int64_t> LoraParams(int64_t rank, const std::vector<std::string>& targets) const;
    /// LoraParams x 2 (bf16): the denominator of every "% of adapter bytes".
    hilo::StatusOr<int64_t> AdapterBytes(int64_t rank,
                                         const std::vector<std::string>& targets) const;
    /// The hilo layout of such an adapter ("layers.3.v.lora_A", ...), canonical target order.
    hilo::StatusOr<hilo::AdapterLayout> LoraLayout(int64_t rank,
                                                   const std::vector<std::string>& targets) const;
};

/// Every profile in file order.
const std::vector<LlmProfile>& ListLlms();
/// The profile named `name` (exact). kNotFound lists the known names.
hilo::StatusOr<LlmProfile> FindLlm(const std::string& name);

} // namespace models

#endif // MODELS_LLM_PROFILE_H
