// Roofline compute-time models: simulated seconds of the GPU work of one RL
// iteration at modelled-LLM scale, on a node of one or more GPUs (gpu-node.h). Each cost is
// max(FLOPs / (peak FLOP/s x MFU), bytes / (peak bandwidth x MBU)) per phase, with efficiency
// factors in ComputeOptions, plus fixed overheads where a real system has them. All sizes are bf16
// (2 bytes) for weights and KV cache, fp32 for adapter-side state.
// Notation: N = LlmProfile::ActiveMatmulParams() (MoE: the weights a token passes through),
// N_b = LlmProfile::TouchedMatmulParams(b) (what a decode step of b tokens reads: MoE layers read
// every expert some token of the batch is routed to), W = Params() (all weights, what memory
// holds), P = prompt tokens, G = generated tokens, L = LoRA parameters, L_g = L's largest
// per-GPU share (AdapterShards::PerGpu), tp = node.tp(), R = node.replicas(), g = node.gpus,
// link = the GPU's interconnect bandwidth x interconnect_eff.
//
// Memory per GPU (CheckNodeMemory; refusal names the GPU, the model and the bytes):
//   rollout  2·ceil(W/tp) + 2·L_g + KV of one sequence        <= mem · memory_headroom
//   train    2·ceil(W/tp) + 16·L_g (fp32 adapter, gradient, m, v)
//   KV per token per GPU = KvBytesPerToken · ceil(kv_heads/tp) / kv_heads (KV heads split; a
//   GPU holds at least one, so with tp > kv_heads KV heads are replicated, as in vLLM); with
//   latent attention (MLA) KvBytesPerToken, the latent every head reads, on every GPU.
// All-reduce of m bytes over n GPUs (ring): AR(m) = 2·(n−1)/n · m / link + allreduce_latency_s
//   (0 when n = 1).
// Rollout (vLLM-style serving, sequences batched, waves when the KV cache is full; each of the R
// replicas serves ceil(sequences / R) of them, in parallel):
//   prefill  FLOPs = b·P·2·(N + L) + b·2·layers·P²·a              (causal attention: QKᵀ + AV)
//            time  = FLOPs / (peak·tp·prefill_mfu) + 2·layers·AR(b·P·hidden·2)
//   decode   per generated token j (context c = P + j), for the b sequences of a wave:
//            bytes = 2·(N_b/tp + L_g) + b·c·KV per token per GPU
//            FLOPs = b·(2·(N + L) + 4·layers·c·a), a = (q_width + o_width) / 2 (= q_width
//            without MLA: keys and values as wide as the queries)
//            time  = max(bytes / (bw·decode_mbu), FLOPs / (peak·tp·decode_mfu))
//                    + 2·layers·AR(b·hidden·2)                      (tp: after attention and MLP)
//   waves    b_max = floor(free memory per GPU / ((P + G)·KV per token per GPU))
// Train step (LoRA, frozen base): FLOPs = tokens·(4·N + 6·L) — forward 2N, backward to the
//   activations 2N, LoRA weight gradients only (≈ 4·N·tokens); attention FLOPs are
//   left out (short sequences); time = FLOPs / (peak·g·train_mfu)
//   + tp: 4·layers·AR(tokens·hidden·2) (two all-reduces per layer forward, two backward)
//   + dp: AR(4·L) (the adapter gradient, fp32).
// Encode on the learner (per adapter matrix m x n, s = min(m, n), k = min(rank, s)):
//   spar      FLOPs = 2·m·n·s (Gram) + 10·s³ (eigensolve) + 2·m·n·k (project); 6 kernels
//   powersgd  FLOPs = 4·m·n·k + 2·max(m, n)·k² (orthogonalize); 4 kernels
//   dense, quant, topk, randk: no FLOP term, one fused kernel per adapter
//   bytes = 12 per parameter (read G and e, write e: error feedback) + 4 (read X for encode);
//   dense reads G only (4 per parameter).
//   time = FLOPs / (peak·tp·encode_mfu) + bytes / (bw·tp·elementwise_mbu)
//          + kernels·kernel_launch_s + (tp, spar/powersgd: AR(Σ 4·k²), the Gram/projection
//          partial sums of the split factors, all matrices in one all-reduce).
// Decode + replay on a worker (memory-bound streaming, 3 fused kernels), per GPU:
//   hilo  32 B/param (decode writes Ĝ fp32; AdamW reads θ m v Ĝ, writes θ m v)
//   delta 16 B/param (decode writes δ; add reads θ δ, writes θ)
//   full   6 B/param (bf16 or fp32 payload read, fp32 θ write)
//   time = L_g·B / (bw·elementwise_mbu) + 3·kernel_launch_s.
//   Under tp every GPU receives the whole payload (it crosses the WAN once per node: splitting it
//   per GPU would add a header and a hash per shard and save nothing on the wire) and decodes
//   only its slice: the rows of the split factors that are its own (a low-rank payload factor
//   u·σ·vᵀ: its rows of u, all of v) and the replicated factors whole. So the replicated part
//   (r x hidden per module) is decoded and replayed on every GPU and bounds the speed-up: L_g,
//   not L/tp. The payload's copy from host to each GPU (its own PCIe link, in parallel) is as
//   small as the payload and left out, as for one GPU.
// Adapter load (full sync): each GPU loads its share over its own host link, in parallel:
//   L_g bytes / (host_link·host_link_eff) + adapter_load_overhead_s.
#ifndef MODELS_COMPUTE_MODEL_H
#define MODELS_COMPUTE_MODEL_H

#include "models/gpu-node.h"
#include "models/gpu-profile.h"
#include "models/llm-profile.h"

#include "hilo/core/adapter-layout.h"
#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace models
{

struct ComputeOptions
{
    double prefill_mfu{0.5};           // prefill GEMMs are large: ~50% of peak is typical in vLLM
    double decode_mbu{0.7};            // decode streams weights + KV: ~70% of peak bandwidth
    double decode_mfu{0.5};            // FLOP ceiling of decode at large batch
    double train_mfu{0.35};            // LoRA fwd+bwd: small adapter GEMMs and no fused optimizer
    double encode_mfu{0.05};           // many small SVD/GEMMs (r x d) run far below peak
    double elementwise_mbu{0.6};       // streaming kernels (decode, AdamW, adds)
    double host_link_eff{0.8};         // achieved fraction of PCIe bandwidth
    double interconnect_eff{0.7};      // all-reduce bus bandwidth as a fraction of the link's peak
    double allreduce_latency_s{20e-6}; // fixed cost of one all-reduce inside a node (launch,
                                       // synchronisation): an assumption, not a measurement
    double kernel_launch_s{5e-6};      // launch + sync per kernel
    double adapter_load_overhead_s{2e-3}; // swapping an adapter into the serving engine
    double memory_headroom{0.9};          // usable fraction of GPU memory
    std::vector<std::string> targets{LlmTargetNames()}; // LoRA target modules

    hilo::Status Validate() const;
};

enum class NodeWork
{
    kRollout, // weights + adapter + one sequence's KV cache
    kTrain,   // weights + adapter, gradient, AdamW m and v (fp32)
};

/// Ok when `llm` with a rank-`lora_rank` adapter (and, for kRollout, the KV cache of one
/// sequence of `context_tokens`) fits every GPU of `node`; otherwise kInvalidArgument naming the
/// model, the node, the GPU, the bytes one GPU needs (by part) and the bytes it has.
hilo::Status CheckNodeMemory(const GpuNode& node, const LlmProfile& llm, int64_t lora_rank,
                             int64_t context_tokens, NodeWork work,
                             const ComputeOptions& options = {});

/// Seconds to generate `gen_tokens` after `prompt_tokens` for `sequences` sequences with a
/// rank-`lora_rank` adapter. kInvalidArgument when the weights do not fit (CheckNodeMemory) or an
/// argument is out of range.
hilo::StatusOr<double> RolloutSeconds(const GpuNode& node, const LlmProfile& llm, int64_t lora_rank,
                                      int64_t sequences, int64_t prompt_tokens, int64_t gen_tokens,
                                      const ComputeOptions& options = {});

/// Seconds of one LoRA training step (forward + backward + optimizer) over `tokens` tokens.
/// kInvalidArgument when weights + adapter training state do not fit.
hilo::StatusOr<double> TrainStepSeconds(const GpuNode& node, const LlmProfile& llm,
                                        int64_t lora_rank, int64_t tokens,
                                        const ComputeOptions& options = {});

/// Seconds the learner spends encoding one gradient of an adapter with `layout` (e.g.
/// LlmProfile::LoraLayout) with compressor `compressor` ("spar", "sparq", "powersgd", "dense",
/// "topk", "randk", "quant", "pulse") at `rank` (spar, sparq: the largest kept rank; powersgd: its
/// rank; ignored by the others). kNotSupported for an unknown compressor, naming the known ones.
hilo::StatusOr<double> EncodeSeconds(const GpuNode& node, const hilo::AdapterLayout& layout,
                                     const std::string& compressor, int64_t rank,
                                     const ComputeOptions& options = {});

/// Seconds a worker spends decoding an update and applying it ("hilo": replay AdamW; "delta" and
/// "primal": add; "full": copy parameters) for an adapter of `adapter` parameters.
/// kNotSupported for an unknown strategy.
hilo::StatusOr<double> DecodeReplaySeconds(const GpuNode& node, const AdapterShards& adapter,
                                           const std::string& strategy,
                                           const ComputeOptions& options = {});

/// Seconds to load a full adapter of `adapter_bytes` (AdapterShards in bytes) into the serving
/// engine (host to device copy plus a fixed swap overhead).
double AdapterLoadSeconds(const GpuNode& node, const AdapterShards& adapter_bytes,
                          const ComputeOptions& options = {});

} // namespace models

#endif // MODELS_COMPUTE_MODEL_H
