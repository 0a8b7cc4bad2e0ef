// Workload: the one interface through which the simulator drives a learning workload. Workers
// call Rollout with their replica's parameters; the learner calls Gradient on
// the trajectory batches it received and applies the result through hilo (Publisher/ReplayStep);
// anyone calls Evaluate for the learning quality. Parameters and gradients are flat fp32 vectors
// in the canonical order of layout(), so they are hilo AdapterState::theta and hilo gradients.
//
// Two kinds:
// - "distill": on-policy distillation. The student samples, the learner minimizes the exact
//   per-position reverse KL(student || teacher) over the vocabulary on the sampled prefixes.
//   Quality: that KL on the held-out prompts (lower is better); extra metric
//   gap_closed = 1 - KL(theta) / KL(base). Two teachers (teacher_kind):
//   "planted": the frozen seeded random base plus a planted low-rank delta (teacher_delta_rank,
//     _decay, _scale) on every adapted matrix, on uniform random prompts (teaching scenarios);
//   "finetuned": the base is the byte-level LM pretrained on Debian's fortunes
//     (models/tools/pretrain-text.cc) and the teacher is that base fine-tuned with all its weights
//     on another category of the same corpus (computing); prompts are windows of held-out text of
//     the teacher's category (training prompts and evaluation prompts from disjoint halves).
// - "grpo": GRPO with a verifiable reward: group_size samples per prompt, advantages
//   (r - mean) / (std + 1e-4) within the group, PPO-style ratio against the behaviour log-probs
//   clipped to 1 +- clip_eps (this is what makes stale rollouts usable), minus entropy_coef x the
//   mean exact entropy of the policy at the sampled positions. Quality: mean reward on the
//   held-out prompts. Two tasks (grpo_task):
//   "residue": after a random prompt x, every generated token y_t should satisfy y_t mod K ==
//     (y_{t-1} + s) mod K (K = task_modulus, y_{-1} = last prompt token, stride s = 1 + x_0 mod
//     (K - 1) set by the first prompt token, or s = 1 without task_prompt_stride). Reward = the
//     fraction of the gen_tokens positions that do (uniform random tokens score 1/K). Random base.
//   "randomwalks": shortest paths on a seeded random graph, the task of trlX's randomwalks
//     example (models/random-walk-graph.h): the prompt is one start node, the policy emits the
//     walk (gen_tokens = max_length - 1 nodes), reward = the walk's optimality in [0, 1]. The base
//     is pretrained at Create on uniform random walks of the graph (walk_pretrain_steps).
//
// Determinism: prompts, samples and the initial adapter are functions of (seed, step, worker)
// only; identical theta bytes give identical trajectory bytes and identical gradients.
#ifndef MODELS_WORKLOAD_H
#define MODELS_WORKLOAD_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/core/status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace models
{

struct WorkloadConfig
{
    std::string kind{"distill"}; // "distill" or "grpo"
    uint64_t seed{1};            // base, teacher, prompts, sampling and initial adapter
    int num_threads{1};          // at::set_num_threads at Create; the tiny model gains nothing
                                 // from more, and 1 keeps results independent of the machine

    // Tiny causal LM (the default fits a 200-step curve in a couple of CPU minutes).
    int64_t vocab{64};   // tokens
    int64_t d_model{64}; // residual width
    int64_t layers{2};   // transformer blocks
    int64_t heads{4};    // attention heads (divide d_model)
    int64_t context{32}; // max sequence length; >= prompt_tokens + gen_tokens

    // LoRA (training rank is a scenario knob: "train high, ship low").
    int64_t lora_rank{8};                                                    // r
    double lora_alpha{16.0};                                                 // scale alpha / r
    std::vector<std::string> lora_targets{"q", "k", "v", "o", "up", "down"}; // adapted linears

    // Rollouts: each worker samples prompts_per_worker prompts x group_size completions per step.
    int64_t prompts_per_worker{8}; // distinct prompts per worker and step
    int64_t group_size{4};         // samples per prompt (GRPO group; distill: more prefixes)
    int64_t prompt_tokens{8};      // random prompt length
    int64_t gen_tokens{16};        // sampled tokens per sequence
    double temperature{1.0};       // sampling temperature (> 0); distillation's KL is at 1

    // Distillation.
    std::string teacher_kind{"planted"}; // "planted" or "finetuned" (see above)
    std::string text_checkpoint;         // finetuned: the checkpoint file; empty: the committed
                                         // one (DefaultTextCheckpointPath()); its shape must
                                         // equal vocab, d_model, layers, heads and context
    // Planted teacher: the capacity the task needs.
    int64_t teacher_delta_rank{8};   // rank of the planted delta per adapted matrix (= lora_rank:
                                     // the default student can represent the teacher exactly)
    double teacher_delta_decay{0.8}; // singular value j is scale x decay^j (relative)
    double teacher_delta_scale{3.0}; // leading singular value relative to the base matrix's;
                                     // 3 puts KL(base || teacher) near 0.9 nats per token

    // GRPO.
    std::string grpo_task{"residue"}; // "residue" or "randomwalks"
    int64_t task_modulus{4};          // K of the residue-chain reward; random policy scores 1/K
    bool task_prompt_stride{true};    // stride 1 + prompt[0] mod (K-1) instead of 1: the policy
                                      // must attend to the first prompt token (without: a task
                                      // the default learns in ~40 steps)
    bool importance_ratio{true};      // PPO ratio vs behaviour log-probs; false: plain REINFORCE
    double clip_eps{0.2};             // ratio clip 1 +- eps (with importance_ratio)
    double entropy_coef{0.0};         // bonus coef x mean exact per-token entropy (nats) of the
                                      // policy on the sampled prefixes: keeps a wide policy from
                                      // collapsing to one completion per prompt (0: none)

    // GRPO randomwalks (trlX's defaults): the walk has at most gen_tokens + 1 nodes; prompts are
    // one token (prompt_tokens must be 1) and vocab must hold the nodes.
    int64_t walk_nodes{21};           // graph nodes, [2, vocab]; node 0 is the goal
    double walk_edge_prob{0.1};       // P(edge i -> j), (0, 1]
    uint64_t walk_graph_seed{1002};   // the graph (fixed across training seeds, as in trlX)
    int64_t walk_pretrain_steps{300}; // next-token steps of the base on random walks, >= 0
    int64_t walk_pretrain_batch{64};  // walks per pretraining step

    // Learner and evaluation.
    double grad_clip_norm{1.0}; // global L2 norm of the returned gradient; <= 0 disables
    int64_t eval_prompts{128};  // held-out prompts (one sample each, fixed sampling seed)
    // Most sequences one forward/backward pass of Gradient holds; more are split into passes of
    // whole groups whose gradients accumulate (the loss weighted by each pass's share of the
    // sequences), so the autograd graph stops growing with the batch. 0: one pass over every
    // sequence (the summation order of every result made before the limit existed); > 0: a
    // multiple of group_size. Changes the float summation order, so not byte-identical to 0.
    int64_t micro_batch_sequences{0};

    /// Checks every field; messages name the field and what is allowed.
    hilo::Status Validate() const;
};

/// The larger "paper" configuration: training rank 64 (alpha 128), width 256, 2 layers, 8 heads,
/// vocab 128, teacher delta rank 32 (decay 0.9): "train high" has something to learn; GRPO on the
/// stride-1 residue chain (task_prompt_stride false).
WorkloadConfig PaperWorkloadConfig(const std::string& kind);

struct RolloutInfo
{
    int64_t sequences{0};
    int64_t prompt_tokens{0};    // summed over sequences
    int64_t generated_tokens{0}; // summed over sequences
    double cpu_s{0};             // process CPU seconds spent in Rollout
};

struct GradientInfo
{
    double loss{0};      // mean loss over the merged batches (before clipping)
    double grad_norm{0}; // global L2 norm before clipping
    int64_t tokens{0};   // generated tokens the loss was averaged over
    int64_t passes{0};   // forward/backward passes (1 unless micro_batch_sequences split them)
    int64_t max_pass_sequences{0}; // the most sequences one pass held (its autograd graph)
    double cpu_s{0};               // process CPU seconds spent in Gradient
};

/// Quality plus any secondary metrics (name, value), e.g. distillation's gap_closed.
struct Evaluation
{
    double quality{0};
    std::vector<std::pair<std::string, double>> extra;
};

class Workload
{
  public:
    virtual ~Workload() = default;

    /// Validates `config`, builds the base (and teacher), sets the thread count.
    static hilo::StatusOr<std::unique_ptr<Workload>> Create(const WorkloadConfig& config);

    virtual const WorkloadConfig& config() const = 0;
    /// Canonical order of the LoRA matrices (A r x d_in, B d_out x r; per layer q k v o up down).
    virtual const hilo::AdapterLayout& layout() const = 0;
    /// Version 0, deterministic from the seed: A random (Kaiming-uniform bound), B zero.
    virtual hilo::AdapterState InitialAdapter() const = 0;

    /// Worker side: samples this worker's prompts for `step` with parameters `theta` (a replica's
    /// flat fp32 vector, layout order) and returns one serialized TrajectoryBatch. Errors:
    /// kInvalidArgument when theta has the wrong size.
    virtual hilo::StatusOr<std::string> Rollout(const std::vector<float>& theta, uint64_t step,
                                                uint32_t worker, RolloutInfo* info) = 0;

    /// Rollout of several workers that hold the same `theta`, in one batched call: element i is
    /// exactly what Rollout(theta, step, workers[i]) returns, byte for byte (each worker keeps its
    /// own prompt and sampling streams). `infos` (optional) gets one entry per worker; the CPU
    /// time of the call is split evenly. The default calls Rollout once per worker.
    virtual hilo::StatusOr<std::vector<std::string>> RolloutMany(
        const std::vector<float>& theta, uint64_t step, const std::vector<uint32_t>& workers,
        std::vector<RolloutInfo>* infos);

    /// Learner side: the flat gradient (layout order, global-norm clipped) of the loss on
    /// `batches` at parameters `theta`. Errors: kCorruption for malformed batch bytes (naming the
    /// batch index), kInvalidArgument for wrong theta size, no batches, or batches made under
    /// another configuration. Stale batches (sampled at older parameters) are fine: GRPO corrects
    /// with the importance ratio; distillation's per-position KL is valid on any prefix.
    virtual hilo::StatusOr<std::vector<float>> Gradient(const std::vector<float>& theta,
                                                        const std::vector<std::string>& batches,
                                                        GradientInfo* info) = 0;

    /// Quality on the fixed held-out prompts (deterministic in theta).
    virtual double Evaluate(const std::vector<float>& theta) { return EvaluateAll(theta).quality; }
    virtual Evaluation EvaluateAll(const std::vector<float>& theta) = 0;
    /// "reverse_kl" or "mean_reward".
    virtual std::string QualityMetric() const = 0;
    virtual bool HigherIsBetter() const = 0;
};

} // namespace models

#endif // MODELS_WORKLOAD_H
