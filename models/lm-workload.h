// LmWorkload: what the distillation and GRPO workloads share on top of TinyLm: seeded prompts,
// rollouts into TrajectoryBatch bytes, batch parsing and merging, the autograd step and global-norm
// clipping of the flat gradient. Subclasses supply the reward (if any), the loss and evaluation.
// Internal to models/; the simulator sees only Workload.
#ifndef MODELS_LM_WORKLOAD_H
#define MODELS_LM_WORKLOAD_H

#include "models/tiny-lm.h"
#include "models/trajectory-batch.h"
#include "models/workload.h"

#include <ATen/ATen.h>

namespace models
{

/// All trajectories of one Gradient call, concatenated in batch order.
struct MergedBatch
{
    at::Tensor tokens;         // [N, P + G] int64
    at::Tensor behaviour_logp; // [N, G] float
    at::Tensor rewards;        // [N] float
    int64_t prompt_len{0};
    int64_t gen_len{0};
    int64_t group_size{1};
};

/// Rows of one batched generation in RolloutMany (whole workers, at least one): each of the four
/// K/V tensors of 1,024 rows of the quickstart's model is ~13 MB, inside glibc's heap
/// (models/tensor-memory.h).
constexpr int64_t kRolloutChunkRows = 1024;

/// Streams of SeededRng::Mix, so that no two uses of the seed collide.
enum RngStream : uint64_t
{
    kStreamPrompts = 1,
    kStreamSampling = 2,
    kStreamEvalPrompts = 3,
    kStreamEvalSampling = 4,
    kStreamTeacher = 5,
    kStreamInitialAdapter = 6,
    kStreamPretrain = 7,
};

class LmWorkload : public Workload
{
  public:
    const WorkloadConfig& config() const override { return m_config; }
    const hilo::AdapterLayout& layout() const override { return m_student.layout(); }
    hilo::AdapterState InitialAdapter() const override;
    hilo::StatusOr<std::string> Rollout(const std::vector<float>& theta, uint64_t step,
                                        uint32_t worker, RolloutInfo* info) override;
    hilo::StatusOr<std::vector<std::string>> RolloutMany(const std::vector<float>& theta,
                                                         uint64_t step,
                                                         const std::vector<uint32_t>& workers,
                                                         std::vector<RolloutInfo>* infos) override;
    hilo::StatusOr<std::vector<float>> Gradient(const std::vector<float>& theta,
                                                const std::vector<std::string>& batches,
                                                GradientInfo* info) override;

    /// TinyLm options of a workload config.
    static TinyLmOptions ModelOptions(const WorkloadConfig& config);

  protected:
    LmWorkload(const WorkloadConfig& config, TinyLm student, WorkloadKind kind);

    /// `count` prompts [count, prompt_tokens] from SeededRng(seed): held-out ones for evaluation
    /// (`eval`), training ones otherwise. The default draws uniform random tokens for both.
    virtual at::Tensor Prompts(uint64_t seed, int64_t count, bool eval) const;
    /// Rewards of generated rows (GRPO); the default leaves zeros.
    virtual void Score(const at::Tensor& tokens, std::vector<float>* rewards) const;
    /// The differentiable scalar loss at `lora` (requires grad) on `batch`.
    virtual at::Tensor Loss(const at::Tensor& lora, const MergedBatch& batch) const = 0;

    WorkloadConfig m_config;
    TinyLm m_student;
    WorkloadKind m_kind;
};

/// The GRPO reward of one row of `prompt_len + gen_len` tokens: the fraction of generated
/// positions t with row[t] mod K == (row[t-1] + s) mod K, K = `modulus`, stride s = 1, or
/// s = 1 + row[0] mod (K - 1) with `prompt_stride` (the first prompt token sets the stride).
double ResidueChainReward(const int64_t* row, int64_t prompt_len, int64_t gen_len, int64_t modulus,
                          bool prompt_stride);

/// The GRPO workload on trlX's randomwalks task (grpo-workload.cc).
hilo::StatusOr<std::unique_ptr<Workload>> NewRandomWalksWorkload(const WorkloadConfig& config);

/// Builders of the two kinds (workload.cc dispatches on config.kind).
hilo::StatusOr<std::unique_ptr<Workload>> NewDistillWorkload(const WorkloadConfig& config);
hilo::StatusOr<std::unique_ptr<Workload>> NewGrpoWorkload(const WorkloadConfig& config);

} // namespace models

#endif // MODELS_LM_WORKLOAD_H
