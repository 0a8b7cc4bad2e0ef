// LlmProfile: the shapes of a modelled LLM (decoder-only, grouped-query attention, gated MLP or
// mixture of experts), read from models/data/llms.csv. From them: parameter counts (all, and the
// ones a token passes through), LoRA adapter sizes at any rank and target set, and the
// AdapterLayout a real adapter of that model would have. The simulator scales wire bytes by
// (modelled adapter params / real adapter params).
//
// LoRA on a linear of shape d_out x d_in at rank r has r x (d_in + d_out) parameters (A: r x d_in,
// B: d_out x r). Target modules and their (d_out, d_in), per layer:
//   q: (heads*head_dim, hidden)   k, v: (kv_heads*head_dim, hidden)   o: (hidden, heads*head_dim)
//     with multi-head latent attention (MLA, named as in DeepSeek-V3's checkpoints):
//     q: q_a_proj (q_lora_rank, hidden) and q_b_proj (heads*(head_dim+rope_head_dim), q_lora_rank)
//     k: kv_a_proj_with_mqa (kv_lora_rank+rope_head_dim, hidden)
//     v: kv_b_proj (heads*(head_dim+v_head_dim), kv_lora_rank)   o: (hidden, heads*v_head_dim)
//   gate, up: (width, hidden)   down: (hidden, width), on every dense MLP (width = intermediate)
//     and, in an MoE layer, on each shared expert (width = expert_intermediate); an MoE layer
//     without shared experts has no gate/up/down module outside its routed experts;
//   experts: gate, up and down of every routed expert of every MoE layer (width =
//     expert_intermediate). Not in the default set: it multiplies the adapter by about the
//     number of experts (see `hilo-sim list models`).
// Biases (Qwen2.5 has q/k/v biases), norm weights and routers are not adapted; Params() counts
// norms and routers but not biases (0.002% of Qwen2.5-7B).
//
// Tensor parallelism (Megatron-style, as vLLM shards LoRA): q, k, v, gate, up and the experts'
// gate/up are column-parallel (the output dimension is split across the GPUs), o and down are
// row-parallel (the input dimension is split). Each GPU keeps the LoRA factor on the split
// dimension in slices (B of a column-parallel module, A of a row-parallel one) and a replica of
// the other factor (r x d_in of a column-parallel module, d_out x r of a row-parallel one: r x
// hidden for every module of a model without MLA): LoraReplicatedParams. MLA's q_a_proj and
// kv_a_proj_with_mqa are replicated whole on every GPU (as vLLM runs them), and so are their
// LoRA factors; q_b_proj and kv_b_proj are column-parallel, o row-parallel.
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

/// The default ("all-linear") LoRA target modules, in canonical order: q k v o gate up down.
const std::vector<std::string>& LlmTargetNames();
/// Every LoRA target a profile accepts, canonical order: LlmTargetNames() then "experts".
const std::vector<std::string>& LlmAllTargetNames();

struct LlmProfile
{
    std::string name;
    int64_t layers{0};
    int64_t hidden{0};
    int64_t intermediate{0}; // dense MLP width (MoE models: of the leading dense layers)
    int64_t heads{0};
    int64_t kv_heads{0};
    int64_t head_dim{0};
    int64_t vocab{0};
    bool tied_embeddings{false};
    int64_t experts{0};             // routed experts per MoE layer; 0: dense
    int64_t active_experts{0};      // routed experts per token
    int64_t expert_intermediate{0}; // MLP width of each routed or shared expert
    int64_t shared_experts{0};      // always-active experts per MoE layer
    int64_t dense_layers{0};        // leading dense-MLP layers of an MoE model
    // Multi-head latent attention (DeepSeek-V2/V3), when kv_lora_rank > 0: k and v come from one
    // compressed latent of kv_lora_rank values per token plus one rotary key of rope_head_dim
    // shared by the heads, and the KV cache holds only those; q is hidden -> q_lora_rank ->
    // heads x (head_dim + rope_head_dim) (q_lora_rank 0: one projection). head_dim is the
    // per-head key width without the rotary part. All four are 0 in a model without MLA.
    int64_t q_lora_rank{0};
    int64_t kv_lora_rank{0};
    int64_t rope_head_dim{0};
    int64_t v_head_dim{0}; // per-head value width (MLA; otherwise head_dim)

    bool moe() const { return experts > 0; }
    bool mla() const { return kv_lora_rank > 0; }
    /// Width of q (and of each head's query-key product, all heads together).
    int64_t q_width() const { return heads * (head_dim + rope_head_dim); }
    /// Width of the attention output the o projection reads (all heads' values).
    int64_t o_width() const { return mla() ? heads * v_head_dim : q_width(); }
    int64_t kv_width() const { return kv_heads * head_dim; }
    /// Layers whose MLP is a mixture of experts (0 for a dense model).
    int64_t moe_layers() const { return moe() ? layers - dense_layers : 0; }
    /// Weights of one expert (gate, up, down at expert_intermediate).
    int64_t expert_params() const { return 3 * hidden * expert_intermediate; }

    /// (d_out, d_in) of each module `target` adapts in layer `layer` (several for "experts", none
    /// where the layer lacks the module); kInvalidArgument names the allowed targets.
    hilo::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Modules(
        int64_t layer, const std::string& target) const;
    /// Weights of every matmul in the model: block linears, routers, every expert, output head.
    int64_t MatmulParams() const;
    /// Weights of the matmuls one token passes through: MatmulParams less the routed experts it
    /// skips (equal to MatmulParams for a dense model).
    int64_t ActiveMatmulParams() const;
    /// Weights a batch of `tokens` tokens reads in one decode step: the active weights, with the
    /// expected number of distinct routed experts the batch touches per MoE layer,
    /// experts x (1 - (1 - active/experts)^tokens) (routing taken as uniform), in place of
    /// active_experts. Real (not integer): an expectation.
    double TouchedMatmulParams(int64_t tokens) const;
    /// All parameters: block linears, routers, experts, norms, embedding, (untied) output head.
    int64_t Params() const;
    /// Params less the routed experts a token skips: the "activated parameters" model cards
    /// state (embedding included); Params for a dense model.
    int64_t ActiveParams() const { return Params() - (MatmulParams() - ActiveMatmulParams()); }
    /// bf16 KV cache bytes per token of context (all layers, K and V; MLA: the latent and the
    /// rotary key).
    int64_t KvBytesPerToken() const
    {
        return mla() ? layers * (kv_lora_rank + rope_head_dim) * 2 : layers * 2 * kv_width() * 2;
    }

    /// LoRA parameters at `rank` on `targets` in every layer. Errors: rank < 1, unknown or
    /// repeated target.
    hilo::StatusOr<int64_t> LoraParams(int64_t rank, const std::vector<std::string>& targets) const;
    /// Of LoraParams, those every tensor-parallel GPU holds whole (r x hidden per module; see
    /// the file comment); the rest is split evenly across the GPUs.
    hilo::StatusOr<int64_t> LoraReplicatedParams(int64_t rank,
                                                 const std::vector<std::string>& targets) const;
    /// LoraParams x 2 (bf16): the denominator of every "% of adapter bytes".
    hilo::StatusOr<int64_t> AdapterBytes(int64_t rank,
                                         const std::vector<std::string>& targets) const;
    /// The hilo layout of such an adapter ("layers.3.v.lora_A", "layers.3.experts.17.up.lora_B"),
    /// canonical target order.
    hilo::StatusOr<hilo::AdapterLayout> LoraLayout(int64_t rank,
                                                   const std::vector<std::string>& targets) const;
};

/// Every profile in file order.
const std::vector<LlmProfile>& ListLlms();
/// The profile named `name` (exact). kNotFound lists the known names.
hilo::StatusOr<LlmProfile> FindLlm(const std::string& name);

} // namespace models

#endif // MODELS_LLM_PROFILE_H
