// Roofline compute-time models (DESIGN.md section 5): simulated seconds of the GPU work of one RL
// iteration at modelled-LLM scale. Each cost is max(FLOPs / (peak FLOP/s x MFU), bytes / (peak
// bandwidth x MBU)) per phase, with efficiency factors in ComputeOptions, plus fixed overheads
// where a real system has them. All sizes are bf16 (2 bytes) for weights and KV cache, fp32 for
// adapter-side state. N = LlmProfile::MatmulParams(), L = LoRA parameters, tp = options.gpus.
//
// Rollout (vLLM-style serving, sequences batched together, waves when the KV cache is full):
//   prefill  FLOPs = b·P·2·(N + L) + b·2·layers·P²·q_width       (causal attention: QKᵀ + AV, half)
//            time  = FLOPs / (peak·tp·prefill_mfu)
//   decode   per generated token j (context c = P + j), for the b sequences of a wave:
//            bytes = 2·(N + L) + b·c·KvBytesPerToken                (weights once, each KV once)
//            FLOPs = b·(2·(N + L) + 4·layers·c·q_width)
//            time  = max(bytes / (bw·tp·decode_mbu), FLOPs / (peak·tp·decode_mfu))
//   waves    b_max = floor((mem·tp·headroom − 2·Params − 2·L) / ((P + G)·KvBytesPerToken))
// Train step (LoRA, frozen base): FLOPs = tokens·(4·N + 6·L) — forward 2N, backward to the
//   activations 2N, LoRA weight gradients only (DESIGN.md: ≈ 4·N·tokens); attention FLOPs are
//   left out (short sequences); time = FLOPs / (peak·tp·train_mfu).
// Encode on the learner (per adapter matrix m x n, s = min(m, n), k = min(rank, s)):
//   spar      FLOPs = 2·m·n·s (Gram) + 10·s³ (eigensolve) + 2·m·n·k (project); 6 kernels
//   powersgd  FLOPs = 4·m·n·k + 2·max(m, n)·k² (orthogonalize); 4 kernels
//   dense, quant, topk, randk: no FLOP term, one fused kernel per adapter
//   bytes = 12 per parameter (read G and e, write e: error feedback) + 4 (read X for encode);
//   dense reads G only (4 per parameter).
//   time = FLOPs / (peak·encode_mfu) + bytes / (bw·elementwise_mbu) + kernels·kernel_launch_s.
// Decode + replay on a worker (memory-bound streaming, 3 fused kernels):
//   hilo  32 B/param (decode writes Ĝ fp32; AdamW reads θ m v Ĝ, writes θ m v)
//   delta 16 B/param (decode writes δ; add reads θ δ, writes θ)
//   full   6 B/param (bf16 or fp32 payload read, fp32 θ write)
//   time = numel·B / (bw·elementwise_mbu) + 3·kernel_launch_s.
// Adapter load (full sync): bytes / (host_link·host_link_eff) + adapter_load_overhead_s.
#ifndef MODELS_COMPUTE_MODEL_H
#define MODELS_COMPUTE_MODEL_H

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
    double prefill_mfu{0.5};      // prefill GEMMs are large: ~50% of peak is typical in vLLM
    double decode_mbu{0.7};       // decode streams weights + KV: ~70% of peak bandwidth
    double decode_mfu{0.5};       // FLOP ceiling of decode at large batch
    double train_mfu{0.35};       // LoRA fwd+bwd: small adapter GEMMs and no fused optimizer
    double encode_mfu{0.05};      // many small SVD/GEMMs (r x d) run far below peak
    double elementwise_mbu{0.6};  // streaming kernels (decode, AdamW, adds)
    double host_link_eff{0.8};    // achieved fraction of PCIe bandwidth
    double kernel_launch_s{5e-6}; // launch + sync per kernel
    double adapter_load_overhead_s{2e-3}; // swapping an adapter into the serving engine
    int64_t gpus{1};             // tensor-parallel GPUs per node (ideal scaling of FLOPs, bw, mem)
    double memory_headroom{0.9}; // usable fraction of GPU memory
    std::vector<std::string> targets{LlmTargetNames()}; // LoRA target modules

    hilo::Status Validate() const;
};

/// Seconds to generate `gen_tokens` after `prompt_tokens` for `sequences` sequences with a
/// rank-`lora_rank` adapter. kInvalidArgument when the weights do not fit or an argument is out
/// of range.
hilo::StatusOr<double> RolloutSeconds(const GpuProfile& gpu, const LlmProfile& llm,
                                      int64_t lora_rank, int64_t sequences, int64_t prompt_tokens,
                                      int64_t gen_tokens, const ComputeOptions& options = {});

/// Seconds of one LoRA training step (forward + backward + optimizer) over `tokens` tokens.
/// kInvalidArgument when weights + adapter training state do not fit.
hilo::StatusOr<double> TrainStepSeconds(const GpuProfile& gpu, const LlmProfile& llm,
                                        int64_t lora_rank, int64_t tokens,
                                        const ComputeOptions& options = {});

/// Seconds the learner spends encoding one gradient of an adapter with `layout` (e.g.
/// LlmProfile::LoraLayout) with compressor `compressor` ("spar", "sparq", "powersgd", "dense",
/// "topk", "randk", "quant", "pulse") at `rank` (spar, sparq: the largest kept rank; powersgd: its
/// rank; ignored by the others). kNotSupported for an unknown compressor, naming the known ones.
hilo::StatusOr<double> EncodeSeconds(const GpuProfile& gpu, const hilo::AdapterLayout& layout,
                                     const std::string& compressor, int64_t rank,
                                     const ComputeOptions& options = {});

/// Seconds a worker spends decoding an update and applying it ("hilo": replay AdamW; "delta" and
/// "primal": add; "full": copy parameters) for an adapter of `adapter_numel` parameters.
/// kNotSupported for an unknown strategy.
hilo::StatusOr<double> DecodeReplaySeconds(const GpuProfile& gpu, int64_t adapter_numel,
                                           const std::string& strategy,
                                           const ComputeOptions& options = {});

/// Seconds to load a full adapter of `adapter_bytes` into the serving engine (host to device
/// copy plus a fixed swap overhead).
double AdapterLoadSeconds(const GpuProfile& gpu, int64_t adapter_bytes,
                          const ComputeOptions& options = {});

} // namespace models

#endif // MODELS_COMPUTE_MODEL_H
