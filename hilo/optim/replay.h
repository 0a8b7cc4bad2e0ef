// Deterministic optimizer replay: the one function learner and replicas both call to apply a
// gradient. Explicit fixed-order elementwise loops over fp32, compiled with -ffp-contract=off and
// no fast-math; the per-step scalars (learning rate, bias corrections) are computed once, in the
// same order, on every side. Elements are independent, so splitting the loop across threads
// cannot change any result: the outcome does not depend on the number of threads.
#ifndef HILO_OPTIM_REPLAY_H
#define HILO_OPTIM_REPLAY_H

#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"

namespace hilo
{

/// Allocates zeroed moment buffers for `numel` parameters as `config` needs them.
OptimizerState NewOptimizerState(const OptimizerConfig& config, int64_t numel);

/// Checks that `state` has buffers of the sizes `config` needs for `numel` parameters.
Status CheckOptimizerState(const OptimizerConfig& config, const OptimizerState& state,
                           int64_t numel);

/// One optimizer step with gradient `grad`, reading `in` and writing `out`; `out` may alias `in`
/// (in-place on the learner) or be a separate buffer set (replicas: commit only after the hash
/// check). `out`'s buffers are resized as needed. Does not touch versions. Returns kCorruption
/// when any value it wrote (parameter or moment) is NaN or infinite, which a finite gradient can
/// still cause by overflowing (g * g > FLT_MAX): `out` then holds that unusable step, so a caller
/// that must keep its state writes into a separate `out`.
/// REQUIRES: CheckOptimizerState(config, in.optimizer, grad.size()) ok and
///           in.adapter.theta.size() == grad.size().
Status ReplayStep(const OptimizerConfig& config, const ReplicatedState& in,
                  const std::vector<float>& grad, ReplicatedState* out);

} // namespace hilo

#endif // HILO_OPTIM_REPLAY_H
