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
/// check). `out`'s buffers are resized as needed. Does not touch versions.
/// REQUIRES: CheckOptimizerState(config, in.optimizer, grad.size()) ok and
///           in.adapter.theta.size() == grad.size().
void ReplayStep(const OptimizerConfig& config, const ReplicatedState& in,
                const std::vector<float>& grad, ReplicatedState* out);

} // namespace hilo

#endif // HILO_OPTIM_REPLAY_H
