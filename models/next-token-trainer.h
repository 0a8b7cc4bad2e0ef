// NextTokenTrainer: pretrains (or fine-tunes) ALL base weights of a TinyLm by next-token
// cross-entropy, with AdamW (decoupled weight decay), linear warm-up then cosine decay to 10% of
// the peak rate, and a global gradient-norm clip. Written on ATen alone so that the same seed,
// batches and thread count give the same weights bit for bit.
#ifndef MODELS_NEXT_TOKEN_TRAINER_H
#define MODELS_NEXT_TOKEN_TRAINER_H

#include "models/tiny-lm.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace models
{

struct NextTokenTrainerOptions
{
    int64_t steps{200};       // optimizer steps
    int64_t warmup_steps{20}; // linear ramp of the learning rate
    double lr{3e-3};          // peak learning rate
    double weight_decay{0.0}; // AdamW decoupled decay
    double clip_norm{1.0};    // global gradient-norm clip; <= 0 disables
};

/// Trains `lm`'s base in place. `batch(step)` returns the token rows [B, T] (int64, T <= context,
/// T >= 2) of step `step`; the loss is the mean cross-entropy of tokens 1..T-1 given their
/// prefixes. Returns the loss of every step.
std::vector<double> TrainNextToken(const TinyLm& lm,
                                   const std::function<at::Tensor(int64_t step)>& batch,
                                   const NextTokenTrainerOptions& options);

/// Mean next-token cross-entropy (nats per token) of `lm`'s base on `tokens` [B, T].
double NextTokenLoss(const TinyLm& lm, const at::Tensor& tokens);

} // namespace models

#endif // MODELS_NEXT_TOKEN_TRAINER_H
