// Optimizer and learning-rate schedule configuration: plain structs with in-class defaults.
// Learner and replicas must hold equal configs; their fingerprint is part of the config hash.
#ifndef HILO_OPTIM_OPTIMIZER_CONFIG_H
#define HILO_OPTIM_OPTIMIZER_CONFIG_H

#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace hilo
{

enum class LrScheduleKind : uint8_t
{
    kConstant = 0,
    kLinearWarmup = 1, // linear ramp 0 -> base over warmup_steps, then constant
    kCosine = 2,       // linear warmup, then cosine decay to min_lr_ratio * base at total_steps
};

struct LrSchedule
{
    LrScheduleKind kind{LrScheduleKind::kConstant};
    float base_lr{1e-3f};      // peak learning rate
    int64_t warmup_steps{0};   // steps of linear ramp; 0 disables it
    int64_t total_steps{1000}; // cosine horizon; steps past it stay at the floor
    float min_lr_ratio{0.0f};  // cosine floor as a fraction of base_lr
};

/// Learning rate for 1-based optimizer step `step`: a pure function, identical on every host
/// (IEEE double +, -, *, / only, one rounding to float at the end; the cosine is the project's own
/// CosPi, never the host libm's std::cos).
float LearningRate(const LrSchedule& schedule, uint64_t step);

enum class OptimizerKind : uint8_t
{
    kAdamW = 0,       // PyTorch AdamW semantics (decoupled weight decay, bias-corrected moments)
    kSgdMomentum = 1, // PyTorch SGD with momentum (coupled weight decay, buffer = grad on step 1)
};

struct OptimizerConfig
{
    OptimizerKind kind{OptimizerKind::kAdamW};
    LrSchedule lr;
    float beta1{0.9f};        // AdamW first-moment decay
    float beta2{0.999f};      // AdamW second-moment decay
    float eps{1e-8f};         // AdamW denominator floor
    float weight_decay{0.0f}; // AdamW: decoupled; SGD: added to the gradient
    float momentum{0.9f};     // SGD momentum
    float dampening{0.0f};    // SGD dampening
    // AdamW: after this many steps the second moment v and its bias correction stop changing
    // (1-bit Adam's frozen variance: later steps divide by the v of step N, so a gradient that
    // arrives late in one piece moves a coordinate as far as the same gradient spread over the
    // steps it was held back; with an adaptive v such a burst moves it about 1/sqrt(k) as far, k
    // the steps it waited). Per coordinate: a v still 0 at step N (nothing has reached that
    // coordinate yet; under a compressor that skips matrices, whole matrices) keeps being
    // updated until it is positive, and is frozen from then on: a v frozen at 0 would make the
    // first step that reaches it lr * m / eps. 0 = never (plain AdamW).
    int64_t v_freeze_step{0};

    /// Checks ranges (betas in [0,1), eps > 0, lr >= 0, ...).
    Status Validate() const;
    /// 64-bit digest of every field; part of the config hash.
    uint64_t Fingerprint() const;
    /// Whether replicas need moment buffers (AdamW: m and v; SGD: m only).
    bool UsesSecondMoment() const { return kind == OptimizerKind::kAdamW; }
};

const char* OptimizerKindName(OptimizerKind k);
StatusOr<OptimizerKind> ParseOptimizerKind(std::string_view name);
const char* LrScheduleKindName(LrScheduleKind k);
StatusOr<LrScheduleKind> ParseLrScheduleKind(std::string_view name);

} // namespace hilo

#endif // HILO_OPTIM_OPTIMIZER_CONFIG_H
