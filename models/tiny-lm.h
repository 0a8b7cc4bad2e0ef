// TinyLm: a small causal transformer (pre-LayerNorm, learned positions, GELU MLP, untied output)
// with a frozen, seeded base and LoRA on the attention projections (q, k, v, o) and the MLP
// linears (up, down). The LoRA parameters live in ONE flat fp32 tensor in the canonical order of
// a hilo::AdapterLayout: matrix i is `lora.narrow(0, layout.offset(i), numel_i).view({rows,
// cols})`, A factors r x d_in and B factors d_out x r. A gradient of that flat tensor therefore is
// a hilo gradient and a hilo AdapterState::theta is a model parameter, with no reordering.
//
// Every linear computes y = x W^T + (alpha / r) (x A^T) B^T; B = 0 at init, so a fresh adapter
// leaves the base output unchanged. No biases; LayerNorms have unit gain and zero shift.
#ifndef MODELS_TINY_LM_H
#define MODELS_TINY_LM_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/status.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace models
{

/// The adaptable linears of one block, in canonical layout order.
const std::vector<std::string>& LoraTargetNames();

struct TinyLmOptions
{
    int64_t vocab{64};     // tokens; <= 65535 so trajectories store them as u16
    int64_t d_model{64};   // residual width
    int64_t layers{2};     // transformer blocks
    int64_t heads{4};      // attention heads; must divide d_model
    int64_t context{32};   // maximum sequence length (learned position table)
    int64_t mlp_ratio{4};  // MLP hidden width = mlp_ratio x d_model
    int64_t lora_rank{8};  // r of every adapted matrix
    double lora_alpha{16}; // LoRA scale is alpha / r
    std::vector<std::string> lora_targets{LoraTargetNames()}; // subset of q,k,v,o,up,down
    uint64_t seed{1};      // base weights (a different seed is a different "pretrained" model)
    double logit_std{2.0}; // std of the base's output logits: a peaked, non-uniform base

    /// Checks ranges and target names; messages name the field.
    hilo::Status Validate() const;
};

/// Rows of a batched generation that draw from one random stream: `rows` consecutive rows, sampled
/// with SeededRng(rng_seed).
struct SampleStream
{
    int64_t rows{0};
    uint64_t rng_seed{0};
};

/// Tokens and behaviour log-probs of one batched generation.
struct Generation
{
    at::Tensor tokens; // [B, prompt + gen] int64: the prompts followed by the sampled tokens
    at::Tensor logp;   // [B, gen] float: log-prob of each sampled token under the sampling policy
};

class TinyLm
{
  public:
    /// A seeded random base (frozen) and the adapter layout of `options`.
    static hilo::StatusOr<TinyLm> Create(const TinyLmOptions& options);

    const TinyLmOptions& options() const { return m_options; }
    const hilo::AdapterLayout& layout() const { return m_layout; }

    /// The version-0 adapter: A ~ U(-1/sqrt(d_in), 1/sqrt(d_in)) (PEFT's Kaiming-uniform bound)
    /// from SeededRng(seed), B = 0. Layout order.
    std::vector<float> InitialLora(uint64_t seed) const;

    /// Logits [B, T, V] of `tokens` [B, T] (int64, T <= context). `lora` is a flat fp32 [numel]
    /// tensor in layout order (it may require grad; its gradient is then the flat hilo gradient)
    /// or undefined for the bare base.
    at::Tensor Forward(const at::Tensor& tokens, const at::Tensor& lora) const;

    /// Samples `gen_tokens` tokens after each prompt row ([B, P] int64) at `temperature` > 0 with
    /// a KV cache, drawing one uniform per token from SeededRng(rng_seed) in row-major order.
    /// Runs without autograd. REQUIRES: P >= 1, P + gen_tokens <= context.
    Generation Generate(const at::Tensor& prompts, int64_t gen_tokens, double temperature,
                        const at::Tensor& lora, uint64_t rng_seed) const;

    /// Generate for several random streams in one batch: the rows of `prompts` are split into
    /// consecutive groups, one per stream, and each group draws from its own SeededRng in
    /// row-major order within the group -- the draws Generate(that group's prompts, ..., its seed)
    /// makes. The model computes every row independently of the others, so each group gets
    /// exactly the tokens and log-probs of that separate call (tests/models check it bit for
    /// bit). REQUIRES: the streams' rows sum to prompts.size(0).
    Generation GenerateStreams(const at::Tensor& prompts, int64_t gen_tokens, double temperature,
                               const at::Tensor& lora,
                               const std::vector<SampleStream>& streams) const;

    /// A copy whose base has, on every adapted matrix W (d_out x d_in), W += U diag(s) V^T with
    /// random orthonormal U (d_out x k), V (d_in x k), k = min(rank, d_out, d_in) and
    /// s_j = scale * decay^j * ||W||_F / sqrt(min(d_out, d_in)) (so `scale` is relative to W's
    /// typical singular value). The teacher of on-policy distillation.
    TinyLm WithPlantedDelta(int64_t rank, double decay, double scale, uint64_t seed) const;

    /// Wraps a flat parameter vector (layout order) as a tensor; copies the bytes.
    at::Tensor LoraTensor(const std::vector<float>& theta) const;

    /// The base's tensors by name: "embed" [vocab, d], "pos" [context, d], "unembed" [vocab, d],
    /// and "layers.<l>.<name>" [d_out, d_in] for every block's q k v o up down. The handles share
    /// storage with the model: a pretraining loop may set requires_grad on them and update them
    /// in place (models/next-token-trainer.h); nothing else should.
    std::map<std::string, at::Tensor> BaseWeights() const;

    /// A model of `options` whose base is `weights` (the names and shapes of BaseWeights, fp32;
    /// copied), e.g. a pretrained checkpoint. options.seed and logit_std are unused. Errors:
    /// kInvalidArgument naming a missing, extra or misshapen tensor, or non-finite values.
    static hilo::StatusOr<TinyLm> FromBaseWeights(const TinyLmOptions& options,
                                                  const std::map<std::string, at::Tensor>& weights);

  private:
    struct Cache; // per-layer K/V buffers of one generation
    TinyLm() = default;
    // `groups` (optional): row counts of consecutive row groups whose results must not depend on
    // the other groups. A BLAS product's rounding can depend on how many rows it multiplies, so
    // with groups every linear layer multiplies each group as its own matrix of a batched
    // product; everything else is computed row by row anyway. Generation always passes groups
    // (one for a single stream), so a group samples the same with or without company.
    at::Tensor Run(const at::Tensor& tokens, int64_t pos0, const at::Tensor& lora, Cache* cache,
                   const std::vector<int64_t>* groups = nullptr) const;
    at::Tensor Linear(const at::Tensor& x, int64_t layer, const std::string& name,
                      const at::Tensor& lora, const std::vector<int64_t>* groups) const;

    TinyLmOptions m_options;
    hilo::AdapterLayout m_layout;
    at::Tensor m_embed;                                 // [V, d]
    at::Tensor m_pos;                                   // [context, d]
    at::Tensor m_unembed;                               // [V, d]
    at::Tensor m_mask;                                  // [context, context] additive causal
    std::vector<std::map<std::string, at::Tensor>> m_w; // per layer: q k v o up down
    std::map<std::string, size_t> m_lora_index;         // "layer.name" -> layout index of A
    double m_lora_scale{1.0};
};

} // namespace models

#endif // MODELS_TINY_LM_H
